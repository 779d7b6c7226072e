package surface

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Completer is a Fetcher that can also complete the arguments of an
// upstream's prompts and resource templates (completion/complete; found
// by type assertion).
type Completer interface {
	Complete(ctx context.Context, domain string, p *mcp.CompleteParams) (*mcp.CompleteResult, error)
}

// complete is the go-sdk's CompletionHandler: it sends completion/complete
// to the upstream of the prompt or template referred to, under the
// upstream's own name or template.
func (s *Surface) complete(ctx context.Context, req *mcp.CompleteRequest, vis Visibility) (*mcp.CompleteResult, error) {
	if req.Params == nil || req.Params.Ref == nil {
		return nil, invalidParams("completion/complete needs a ref: {\"type\": \"ref/prompt\", \"name\"} or {\"type\": \"ref/resource\", \"uri\"}", map[string]any{})
	}
	ref := *req.Params.Ref
	st := s.st.Load()
	var domain string
	switch ref.Type {
	case "ref/prompt":
		e, candidates := st.resolvePrompt(ref.Name)
		if e == nil || !visible(vis, e.domain, e.origin) {
			if e != nil {
				candidates = nil
			}
			return nil, unknownPrompt(vis, st, ref.Name, candidates)
		}
		domain, ref.Name = e.domain, e.origin
	case "ref/resource":
		d, origin, name := st.resolveTemplate(ref.URI)
		if d == "" || !visible(vis, d, name) {
			return nil, invalidParams(fmt.Sprintf("unknown resource template %s; resources/templates/list gives them, each as %sDOMAIN/<the server's template>", quote(ref.URI), uriPrefix), map[string]any{"uri": ref.URI})
		}
		domain, ref.URI = d, origin
	default:
		return nil, invalidParams(fmt.Sprintf("ref type %s: want ref/prompt or ref/resource", quote(ref.Type)), map[string]any{"type": ref.Type})
	}
	p := *req.Params
	p.Ref, p.Meta = &ref, nil
	res, err := s.comp.Complete(ctx, domain, &p)
	if err != nil {
		return nil, upstreamError(err, "completion/complete", nil)
	}
	return res, nil
}

// resolveTemplate returns the domain and upstream template of a
// client's template: a listed one, one under toolscout://DOMAIN/ of a
// known domain, or an upstream's own that one upstream has.
func (st *state) resolveTemplate(uri string) (domain, origin, name string) {
	if e := st.templates[uri]; e != nil {
		return e.domain, e.origin, e.up.Name
	}
	if d, o, ok := UnwrapURI(uri); ok && st.domains[d] {
		return d, o, "" // a template nothing lists: judged as such
	}
	for _, e := range st.templates {
		if e.origin == uri {
			if domain != "" {
				return "", "", "" // several have it
			}
			domain, origin, name = e.domain, e.origin, e.up.Name
		}
	}
	return domain, origin, name
}
