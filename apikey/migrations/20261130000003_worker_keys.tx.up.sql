-- Worker keys (rk_test_…, rk_live_…): a key's kind, and the products a
-- worker key is limited to (comma-separated; empty: every remote product).
-- Keys made before this migration are ordinary secret keys.
ALTER TABLE apikey_keys ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'secret';
--bun:split
ALTER TABLE apikey_keys ADD COLUMN products TEXT NOT NULL DEFAULT '';
