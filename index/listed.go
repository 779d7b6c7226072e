package index

// ListedTools is what one upstream server listed: its tools (as the
// gateway cleaned them) and what it said about itself.
type ListedTools struct {
	Domain       string     `json:"domain"`
	Title        string     `json:"title,omitempty"`
	Instructions string     `json:"instructions,omitempty"`
	Tools        []ToolSpec `json:"tools"`
}
