package mpesa

import "sync"

// kept holds the trusted outcomes Daraja's result callbacks told (B2C
// payments, reversals, status queries), by our reference, until a status
// check takes them. Bounded: past maxKept an arbitrary entry is dropped,
// and what it held is asked of Daraja again. Safe for concurrent use.
type kept struct {
	mu sync.Mutex
	m  map[string]B2CResult
}

const maxKept = 10000

func (k *kept) put(key string, v B2CResult) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]B2CResult{}
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
func (k *kept) take(key string) (B2CResult, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	delete(k.m, key)
	return v, ok
}
