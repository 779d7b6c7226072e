package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
)

// BenchmarkScrubResult: what redaction adds to a call whose result holds
// no secret, with 5 configured values: the result is encoded once more
// and searched.
func BenchmarkScrubResult(b *testing.B) {
	var secrets []string
	for i := range 5 {
		secrets = append(secrets, fmt.Sprintf("Bearer ghp_%032d", i))
	}
	r := redact.New(secrets...)
	t := &index.Tool{QualifiedName: "d__t"}
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("the quick brown fox jumps over the lazy dog ", size/44+1)[:size]}}}
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if scrubResult(r, t, res) != res {
					b.Fatal("a result without secrets was copied")
				}
			}
		})
	}
}
