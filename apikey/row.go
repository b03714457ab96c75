package apikey

import (
	"database/sql"
	"time"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/storage"
)

// row is a key as stored. Times are Unix microseconds (UTC), as every
// package stores them (storage.Micros).
type row struct {
	id, lineage string
	env         settleflow.Environment
	name        string
	plan        Plan
	perMinute   int
	perDay      int
	hash        string
	display     string
	createdAt   time.Time
	lastUsedAt  *time.Time
	revokedAt   *time.Time
	expiresAt   *time.Time
	successor   string // "" if none recorded
	kind        Kind
	products    string // comma-separated; "" for every product
}

const columns = "id, lineage_id, environment, name, plan, per_minute, per_day, secret_hash, display, created_at, last_used_at, revoked_at, expires_at, successor_id, kind, products"

const insertSQL = "INSERT INTO apikey_keys (" + columns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

// args are the values of columns, in order.
func (r *row) args() []any {
	return []any{r.id, r.lineage, string(r.env), r.name, string(r.plan), int64(r.perMinute), int64(r.perDay),
		r.hash, r.display, storage.Micros(r.createdAt), storage.NullMicros(r.lastUsedAt), storage.NullMicros(r.revokedAt), storage.NullMicros(r.expiresAt),
		sql.NullString{String: r.successor, Valid: r.successor != ""}, string(r.kind), r.products}
}

type scanner interface{ Scan(dest ...any) error }

func (r *row) scan(s scanner) error {
	var (
		env, plan, kind            string
		perMinute, perDay, created int64
		lastUsed, revoked, expires sql.NullInt64
		successor                  sql.NullString
	)
	if err := s.Scan(&r.id, &r.lineage, &env, &r.name, &plan, &perMinute, &perDay, &r.hash, &r.display,
		&created, &lastUsed, &revoked, &expires, &successor, &kind, &r.products); err != nil {
		return err
	}
	r.kind = Kind(kind)
	r.successor = successor.String
	r.env, r.plan = settleflow.Environment(env), Plan(plan)
	r.perMinute, r.perDay = int(perMinute), int(perDay)
	r.createdAt = storage.FromMicros(created)
	r.lastUsedAt, r.revokedAt, r.expiresAt = storage.FromNullMicros(lastUsed), storage.FromNullMicros(revoked), storage.FromNullMicros(expires)
	return nil
}

// key is r without its hash.
func (r *row) key() Key {
	return Key{ID: r.id, Environment: r.env, Name: r.name, Plan: r.plan, Display: r.display,
		PerMinute: r.perMinute, PerDay: r.perDay, CreatedAt: r.createdAt,
		LastUsedAt: clone(r.lastUsedAt), RevokedAt: clone(r.revokedAt), ExpiresAt: clone(r.expiresAt), SuccessorID: r.successor,
		Kind: r.kind, Products: splitProducts(r.products), lineage: r.lineage}
}

// clone copies *t, so that a Key never shares memory with a cached row.
func clone(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}
