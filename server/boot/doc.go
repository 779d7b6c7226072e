// Package boot owns a server's start-up end to end, from the opened data
// dir to the close: it loads the index behind the server (keyword first,
// then the vectors), follows and starts the gateway to the upstream
// servers, falls back to listing every tool when the index cannot load,
// checks the data dir's other files a little later, swaps in the newer
// builds a read-only server's data dir leads to, and closes all of it,
// its goroutines on its own wait group. How far the start has come is one
// typed value, [State], held by a [Readiness]: the one start-up state the
// server reads, for its waits, its readiness probe ([NotReady]) and its
// metrics.
//
// Its place: between cmd/toolscout, which reads flags and config and
// opens the store (store.OpenWith, in one place), and the server, which
// answers requests while the start goes on. It reads no flags and builds
// the only catalog a start builds outside the store: the fallback's.
//
//	st := boot.New(boot.Options{Live: live, Store: store, Gateway: gw, Embedder: newEmbedder})
//	defer st.Close()
//	srv := server.New(server.Options{Live: live, Readiness: st.Readiness()})
//	st.Open(ctx, srv)
//	st.Readiness().Wait(ctx, boot.Loaded)
package boot
