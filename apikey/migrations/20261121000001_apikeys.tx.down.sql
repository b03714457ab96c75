DROP TABLE IF EXISTS apikey_keys;
