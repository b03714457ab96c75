package dblimit

// Waiting reports whether a statement runs, and how many requests wait for
// the next one (Postgres).
func (l *Limiter) Waiting() (running bool, waiting int) {
	l.pg.mu.Lock()
	defer l.pg.mu.Unlock()
	return l.pg.running, len(l.pg.queue)
}
