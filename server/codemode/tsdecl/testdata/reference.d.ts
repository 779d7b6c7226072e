declare namespace tools.memory {
  /** Create multiple new entities in the knowledge graph */
  function create_entities(args: {
    entities: Array<{
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }>;
  }): Promise<{
    entities: Array<{ name: string; entityType: string; observations: string[] }>;
  }>;
  /** Create multiple new relations between entities in the knowledge graph. Relations should be in active voice */
  function create_relations(args: {
    relations: Array<{
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    }>;
  }): Promise<{ relations: Array<{ from: string; to: string; relationType: string }> }>;
  /** Add new observations to existing entities in the knowledge graph */
  function add_observations(args: {
    observations: Array<{
      /** The name of the entity to add the observations to */
      entityName: string;
      /** An array of observation contents to add */
      contents: string[];
    }>;
  }): Promise<{ results: Array<{ entityName: string; addedObservations: string[] }> }>;
  /** Delete multiple entities and their associated relations from the knowledge graph */
  function delete_entities(args: {
    /** An array of entity names to delete */
    entityNames: string[];
  }): Promise<{ success: boolean; message: string }>;
  /** Delete specific observations from entities in the knowledge graph */
  function delete_observations(args: {
    deletions: Array<{
      /** The name of the entity containing the observations */
      entityName: string;
      /** An array of observations to delete */
      observations: string[];
    }>;
  }): Promise<{ success: boolean; message: string }>;
  /** Delete multiple relations from the knowledge graph */
  function delete_relations(args: {
    /** An array of relations to delete */
    relations: Array<{ from: string; to: string; relationType: string }>;
  }): Promise<{ success: boolean; message: string }>;
  /** Read the entire knowledge graph */
  function read_graph(args?: {}): Promise<{
    entities: Array<{ name: string; entityType: string; observations: string[] }>;
    relations: Array<{ from: string; to: string; relationType: string }>;
  }>;
  /** Search for nodes in the knowledge graph based on a query */
  function search_nodes(args: {
    /** The search query to match against entity names, types, and observation content */
    query: string;
  }): Promise<{
    entities: Array<{ name: string; entityType: string; observations: string[] }>;
    relations: Array<{ from: string; to: string; relationType: string }>;
  }>;
  /** Open specific nodes in the knowledge graph by their names */
  function open_nodes(args: {
    /** An array of entity names to retrieve */
    names: string[];
  }): Promise<{
    entities: Array<{ name: string; entityType: string; observations: string[] }>;
    relations: Array<{ from: string; to: string; relationType: string }>;
  }>;
}

declare namespace tools.everything {
  /** Echoes back the input string */
  function echo(args: {
    /** Message to echo */
    message: string;
  }): Promise<unknown>;
  /**
   * Demonstrates how annotations can be used to provide metadata about content.
   * (tool: everything__get-annotated-message)
   */
  function get_annotated_message(args: {
    /** Type of message to demonstrate different annotation patterns */
    messageType: "error" | "success" | "debug";
    /**
     * Whether to include an example image
     * @default false
     */
    includeImage?: boolean;
  }): Promise<unknown>;
  /**
   * Returns all environment variables, helpful for debugging MCP server configuration
   * (tool: everything__get-env)
   */
  function get_env(args?: {}): Promise<unknown>;
  /**
   * Returns up to ten resource links that reference different types of resources
   * (tool: everything__get-resource-links)
   */
  function get_resource_links(args?: {
    /**
     * Number of resource links to return (1-10)
     * @default 3
     */
    count?: number;
  }): Promise<unknown>;
  /**
   * Returns a resource reference that can be used by MCP clients
   * (tool: everything__get-resource-reference)
   */
  function get_resource_reference(args?: {
    /** @default "Text" */
    resourceType?: "Text" | "Blob";
    /**
     * ID of the text resource to fetch
     * @default 1
     */
    resourceId?: number;
  }): Promise<unknown>;
  /**
   * Returns structured content along with an output schema for client data validation
   * (tool: everything__get-structured-content)
   */
  function get_structured_content(args: {
    /** Choose city */
    location: "New York" | "Chicago" | "Los Angeles";
  }): Promise<{
    /** Temperature in celsius */
    temperature: number;
    /** Weather conditions description */
    conditions: string;
    /** Humidity percentage */
    humidity: number;
  }>;
  /**
   * Returns the sum of two numbers
   * (tool: everything__get-sum)
   */
  function get_sum(args: {
    /** First number */
    a: number;
    /** Second number */
    b: number;
  }): Promise<unknown>;
  /**
   * Returns a tiny MCP logo image.
   * (tool: everything__get-tiny-image)
   */
  function get_tiny_image(args?: {}): Promise<unknown>;
  /**
   * Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session.
   * (tool: everything__gzip-file-as-resource)
   */
  function gzip_file_as_resource(args?: {
    /**
     * Name of the output file
     * @default "README.md.gz"
     */
    name?: string;
    /**
     * URL or data URI of the file content to compress
     * @default "https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md"
     */
    data?: string;
    /**
     * How the resulting gzipped file should be returned. 'resourceLink' returns a link to a resource that can be read later, 'resource' returns a full resource object.
     * @default "resourceLink"
     */
    outputType?: "resourceLink" | "resource";
  }): Promise<unknown>;
  /**
   * Toggles simulated, random-leveled logging on or off.
   * (tool: everything__toggle-simulated-logging)
   */
  function toggle_simulated_logging(args?: {}): Promise<unknown>;
  /**
   * Toggles simulated resource subscription updates on or off.
   * (tool: everything__toggle-subscriber-updates)
   */
  function toggle_subscriber_updates(args?: {}): Promise<unknown>;
  /**
   * Demonstrates a long running operation with progress updates.
   * (tool: everything__trigger-long-running-operation)
   */
  function trigger_long_running_operation(args?: {
    /**
     * Duration of the operation in seconds
     * @default 10
     */
    duration?: number;
    /**
     * Number of steps in the operation
     * @default 5
     */
    steps?: number;
  }): Promise<unknown>;
  /**
   * Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification.
   * (tool: everything__simulate-research-query)
   */
  function simulate_research_query(args: {
    /** The research topic to investigate */
    topic: string;
    /**
     * Simulate an ambiguous query that requires clarification (triggers input_required status)
     * @default false
     */
    ambiguous?: boolean;
  }): Promise<unknown>;
}

declare namespace tools.filesystem {
  /**
   * Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.
   * @deprecated use read_text_file
   */
  function read_file(args: {
    path: string;
    /** If provided, returns only the last N lines of the file */
    tail?: number;
    /** If provided, returns only the first N lines of the file */
    head?: number;
  }): Promise<{ content: string }>;
  /** Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Operates on the file as text regardless of extension. Only works within allowed directories. */
  function read_text_file(args: { path: string; tail?: number; head?: number }): Promise<{ content: string }>;
  /** Read a file and return it as a base64-encoded content block with its MIME type. Image and audio files are returned as image/audio content; any other file type is returned as an embedded resource. Only works within allowed directories. */
  function read_media_file(args: { path: string }): Promise<{
    content: Array<{ type: "image" | "audio"; data: string; mimeType: string } | {
      type: "resource";
      resource: { uri: string; mimeType?: string; blob: string };
    }>;
  }>;
  /** Read the contents of multiple files simultaneously. This is more efficient than reading files one by one when you need to analyze or compare multiple files. Each file's content is returned with its path as a reference. Failed reads for individual files won't stop the entire operation. Only works within allowed directories. */
  function read_multiple_files(args: {
    /** Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories. */
    paths: string[];
  }): Promise<{ content: string }>;
  /** Create a new file or completely overwrite an existing file with new content. Use with caution as it will overwrite existing files without warning. Handles text content with proper encoding. Only works within allowed directories. */
  function write_file(args: { path: string; content: string }): Promise<{ content: string }>;
  /** Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories. */
  function edit_file(args: {
    path: string;
    edits: Array<{
      /** Text to search for - must match exactly */
      oldText: string;
      /** Text to replace with */
      newText: string;
    }>;
    /**
     * Preview changes using git-style diff format
     * @default false
     */
    dryRun?: boolean;
  }): Promise<{ content: string }>;
  /** Create a new directory or ensure a directory exists. Can create multiple nested directories in one operation. If the directory already exists, this operation will succeed silently. Perfect for setting up directory structures for projects or ensuring required paths exist. Only works within allowed directories. */
  function create_directory(args: { path: string }): Promise<{ content: string }>;
  /** Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is essential for understanding directory structure and finding specific files within a directory. Only works within allowed directories. */
  function list_directory(args: { path: string }): Promise<{ content: string }>;
  /** Get a detailed listing of all files and directories in a specified path, including sizes. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is useful for understanding directory structure and finding specific files within a directory. Only works within allowed directories. */
  function list_directory_with_sizes(args: {
    path: string;
    /**
     * Sort entries by name or size
     * @default "name"
     */
    sortBy?: "name" | "size";
  }): Promise<{ content: string }>;
  /** Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Files have no children array, while directories always have a children array (which may be empty). The output is formatted with 2-space indentation for readability. Only works within allowed directories. */
  function directory_tree(args: {
    path: string;
    /** @default [] */
    excludePatterns?: string[];
  }): Promise<{ content: string }>;
  /** Move or rename files and directories. Can move files between directories and rename them in a single operation. If the destination exists, the operation will fail. Works across different directories and can be used for simple renaming within the same directory. Both source and destination must be within allowed directories. */
  function move_file(args: { source: string; destination: string }): Promise<{ content: string }>;
  /** Recursively search for files and directories matching a pattern. The patterns should be glob-style patterns that match paths relative to the working directory. Use pattern like '*.ext' to match files in current directory, and '**\/*.ext' to match files in all subdirectories. Returns full paths to all matching items. Great for finding files when you don't know their exact location. Only searches within allowed directories. */
  function search_files(args: { path: string; pattern: string; excludePatterns?: string[] }): Promise<{ content: string }>;
  /** Retrieve detailed metadata about a file or directory. Returns comprehensive information including size, creation time, last modified time, permissions, and type. This tool is perfect for understanding file characteristics without reading the actual content. Only works within allowed directories. */
  function get_file_info(args: { path: string }): Promise<{ content: string }>;
  /** Returns the list of directories that this server is allowed to access. Subdirectories within these allowed directories are also accessible. Use this to understand which directories and their nested paths are available before trying to access files. */
  function list_allowed_directories(args?: {}): Promise<{ content: string }>;
}
