// Package upauth signs toolscout in to upstream MCP servers that sit
// behind OAuth 2.1 (issue 45 item 1): [Login] runs the authorization-code
// flow with PKCE through a loopback redirect (go-sdk auth and oauthex do
// the discovery, dynamic client registration and exchange), a [Store]
// keeps the tokens in the data dir's credentials file, and a [Source]
// hands the gateway the access token of one upstream, refreshing it
// before it expires and after a 401, one refresh at a time (in the
// process, and across processes through the file's lock).
//
//	st := upauth.OpenStore(filepath.Join(dataDir, upauth.FileName))
//	_, err := upauth.Login(ctx, upauth.LoginOptions{Server: "remote", URL: u, Store: st, Open: browser})
//	src := upauth.NewSource(st, "remote", u, nil, redactor.Add)
//	tok, err := src.Token(ctx) // "Bearer " + tok on each request
package upauth
