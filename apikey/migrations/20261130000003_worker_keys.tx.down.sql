ALTER TABLE apikey_keys DROP COLUMN products;
--bun:split
ALTER TABLE apikey_keys DROP COLUMN kind;
