package mpesa

import "sync"

// kept holds what Daraja's callbacks told, by key, until a status check
// takes it. Bounded: past maxKept an arbitrary entry is dropped, and what
// it held is asked of Daraja again. Safe for concurrent use.
type kept[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

const maxKept = 10000

func (k *kept[V]) put(key string, v V) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]V{}
	}
	if len(k.m) >= maxKept {
		for old := range k.m {
			delete(k.m, old)
			break
		}
	}
	k.m[key] = v
}

// take answers and forgets what is kept for key.
func (k *kept[V]) take(key string) (V, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	delete(k.m, key)
	return v, ok
}
