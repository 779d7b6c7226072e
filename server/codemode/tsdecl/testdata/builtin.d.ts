declare namespace tools.github {
  /** Open a new issue in a GitHub repository. */
  function create_issue(args: {
    /** Usernames to assign */
    assignees?: string[];
    /** Issue body in Markdown */
    body?: string;
    /** Labels to apply */
    labels?: string[];
    /** Repository owner */
    owner: string;
    /** Repository name */
    repo: string;
    /** Issue title */
    title: string;
  }): Promise<unknown>;
  /** List issues in a repository, filtered by state, labels, assignee or date. */
  function list_issues(args: {
    /** Only issues with these labels */
    labels?: string[];
    owner: string;
    repo: string;
    /** Only issues updated after this ISO 8601 time */
    since?: string;
    /** Issue state */
    state?: "open" | "closed" | "all";
  }): Promise<unknown>;
  /** Approve, request changes on, or comment on a pull request. */
  function create_pull_request_review(args: {
    /** Review comment */
    body?: string;
    /** Review action */
    event: "APPROVE" | "REQUEST_CHANGES" | "COMMENT";
    owner: string;
    /** PR number */
    pull_number: number;
    repo: string;
  }): Promise<unknown>;
  /** Push several files to a branch in one commit. */
  function push_files(args: {
    /** Branch */
    branch: string;
    /** Files with path and content */
    files: Array<{ [key: string]: unknown }>;
    /** Commit message */
    message: string;
    owner: string;
    repo: string;
  }): Promise<unknown>;
}

declare namespace tools.gcalendar {
  /** Create a calendar event and invite attendees. */
  function create_event(args: {
    /** Add a Google Meet link */
    add_meet_link?: boolean;
    /** Attendee emails */
    attendees?: string[];
    /** Description */
    description?: string;
    /** End time (RFC 3339) */
    end: string;
    /** Location */
    location?: string;
    /** Start time (RFC 3339) */
    start: string;
    /** Event title */
    summary: string;
  }): Promise<unknown>;
  /** Find times when all given people are free for a meeting of a given length. */
  function find_free_slots(args: {
    /** Emails of people to check */
    attendees: string[];
    /** Meeting length */
    duration_minutes: number;
    /** Search until */
    time_max: string;
    /** Search from */
    time_min: string;
  }): Promise<unknown>;
}

declare namespace tools.jira {
  /** Create a Jira issue (story, bug, task) in a project. */
  function create_issue(args: {
    /** Assignee account ID */
    assignee?: string;
    description?: string;
    /** Issue type */
    issue_type: "Story" | "Bug" | "Task" | "Epic";
    /** Priority */
    priority?: "Highest" | "High" | "Medium" | "Low";
    /** Project key, e.g. PAY */
    project_key: string;
    /** Summary */
    summary: string;
  }): Promise<unknown>;
}
