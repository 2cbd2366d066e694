package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// windowScript is one atomic step of the sliding window in Redis: the key holds
// the accepted requests as a sorted set scored by their time in
// microseconds (Redis's own clock, so that the nodes' clocks need not
// agree); the ones older than the window go, and a request is added only
// while fewer than the limit remain. It answers {1, 0} when accepted, {0,
// microseconds until the oldest leaves the window} when refused.
var windowScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local per = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - per)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(per / 1000))
  return {1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2]) + per - now}
`)

// Redis is a Limiter shared by every node that uses the same Redis. While
// Redis cannot be reached, each node falls back to its own Memory limiter
// (the limits then hold per node, as with one node) and says so in its log
// at most every FallbackLogEvery, and in the Fallback count: payments keep
// flowing, the limits loosen to their single-node values meanwhile.
type Redis struct {
	Client *redis.Client
	// Local is the node's own limiter, used while Redis cannot be reached.
	Local *Memory
	// Logger says when the limits fall back to the node's own.
	Logger *slog.Logger
	// Fallback, when set, counts the decisions taken locally.
	Fallback func()
	// Timeout bounds one decision in Redis (1 s when 0), waiting for a
	// connection included, so that a burst on a busy node does not fall
	// back for want of patience; a Redis that does not answer is then left
	// alone for a second (Retry), each decision taken locally meanwhile.
	Timeout time.Duration

	mu        sync.Mutex
	lastAlarm time.Time
	downUntil time.Time
}

// Retry is how long a node decides alone after Redis failed it, before
// asking Redis again.
const Retry = time.Second

// FallbackLogEvery is how often a node says that Redis cannot be reached.
const FallbackLogEvery = 10 * time.Second

// NewRedis connects to the Redis at url (redis://[user:password@]host:port/db).
func NewRedis(url string, local *Memory, logger *slog.Logger) (*Redis, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = 500*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond
	return &Redis{Client: redis.NewClient(opt), Local: local, Logger: logger}, nil
}

// Allow implements Limiter.
func (r *Redis) Allow(ctx context.Context, l Limit, key string) (Decision, error) {
	r.mu.Lock()
	down := time.Now().Before(r.downUntil)
	r.mu.Unlock()
	if down {
		return r.local(ctx, l, key)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var nonce [6]byte
	rand.Read(nonce[:])
	res, err := windowScript.Run(rctx, r.Client, []string{"cauri:rl:" + l.Name + ":" + key},
		l.Per.Microseconds(), l.Count, hex.EncodeToString(nonce[:])).Int64Slice()
	if err == nil && len(res) != 2 {
		err = errors.New("unexpected answer")
	}
	if err != nil && ctx.Err() != nil {
		return Decision{}, ctx.Err() // the client left: no fault of Redis's
	}
	if err != nil {
		r.mu.Lock()
		r.downUntil = time.Now().Add(Retry)
		r.mu.Unlock()
		r.alarm(err)
		return r.local(ctx, l, key)
	}
	if res[0] == 1 {
		return Decision{Allowed: true}, nil
	}
	return Decision{RetryAfter: time.Duration(res[1]) * time.Microsecond}, nil
}

// local decides with the node's own limits, counted.
func (r *Redis) local(ctx context.Context, l Limit, key string) (Decision, error) {
	if r.Fallback != nil {
		r.Fallback()
	}
	return r.Local.Allow(ctx, l, key)
}

// alarm logs, at most every FallbackLogEvery, that the limits are the
// node's own for now.
func (r *Redis) alarm(err error) {
	r.mu.Lock()
	now := time.Now()
	due := now.Sub(r.lastAlarm) >= FallbackLogEvery
	if due {
		r.lastAlarm = now
	}
	r.mu.Unlock()
	if due && r.Logger != nil {
		r.Logger.Error("RATE LIMITS ARE PER NODE: Redis cannot be reached; each node applies its own limits until it can",
			"error", err.Error())
	}
}

// Close closes the connection to Redis.
func (r *Redis) Close() error { return r.Client.Close() }
