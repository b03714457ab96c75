ALTER TABLE apikey_keys DROP COLUMN successor_id;
