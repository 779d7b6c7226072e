// Package server exposes toolscout's search engine as an MCP server.
package server
