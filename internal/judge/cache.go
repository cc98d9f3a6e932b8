package judge

import (
	"container/list"
	"sync"
)

// lru is a bounded verdict cache, least recently used evicted first. A nil or zero-sized
// cache keeps nothing.
type lru struct {
	mu    sync.Mutex
	size  int
	order *list.List
	items map[string]*list.Element
}

type lruItem struct {
	key string
	v   Verdict
}

func newLRU(size int) *lru {
	return &lru{size: size, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) (Verdict, bool) {
	if c.size == 0 {
		return Verdict{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return Verdict{}, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruItem).v, true
}

func (c *lru) put(key string, v Verdict) {
	if c.size == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*lruItem).v = v
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&lruItem{key: key, v: v})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruItem).key)
	}
}
