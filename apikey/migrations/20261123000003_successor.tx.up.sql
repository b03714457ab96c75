-- The key a rotation replaced a key with: a key has at most one successor,
-- and rotating a rotated key is refused naming it (docs/api.md §8). Keys
-- rotated before this migration have none recorded.
ALTER TABLE apikey_keys ADD COLUMN successor_id VARCHAR(64);
