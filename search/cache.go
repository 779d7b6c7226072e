package search

import (
	"container/list"
	"sync"
)

// vectorCache is a small LRU of query embeddings. A dozen lines of
// container/list do what an LRU module would, without the dependency.
type vectorCache struct {
	mu    sync.Mutex
	cap   int
	ll    *list.List
	items map[string]*list.Element
}

type cacheEntry struct {
	key string
	vec []float32
}

func newVectorCache(capacity int) *vectorCache {
	return &vectorCache{cap: capacity, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *vectorCache) get(key string) ([]float32, bool) {
	if c.cap <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*cacheEntry).vec, true
	}
	return nil, false
}

func (c *vectorCache) put(key string, vec []float32) {
	if c.cap <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*cacheEntry).vec = vec
		c.ll.MoveToFront(e)
		return
	}
	c.items[key] = c.ll.PushFront(&cacheEntry{key, vec})
	if c.ll.Len() > c.cap {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}

// clear empties the cache.
func (c *vectorCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ll.Init()
	clear(c.items)
}

func (c *vectorCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
