package catalog

// The black-box tests (package catalog_test) check what SetServers queues for Run, and that
// a fetch's result is stored only when no later fetch or Drop has overtaken it, without
// racing real fetches to get there: they drive the catalog's bookkeeping of fetches through
// these few hooks.

// PendingServers returns the servers that have a list fetch queued for Run.
func (c *Catalog) PendingServers() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]bool{}
	for k := range c.pending {
		out[k.server] = true
	}
	return out
}

// ApplyTools stores tools as the result of the server's tools fetch numbered seq, as a
// finished fetch does, and reports whether it was stored.
func (c *Catalog) ApplyTools(server string, seq uint64, tools []Tool) bool {
	return c.apply(server, KindTools, seq, lists{tools: tools})
}

// MarkStarted records that the server's fetch of kind numbered seq has started, as Run does
// before it fetches.
func (c *Catalog) MarkStarted(server string, kind Kind, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.servers[server].started[kind] = seq
}
