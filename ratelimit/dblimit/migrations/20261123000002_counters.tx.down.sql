DROP TABLE IF EXISTS ratelimit_counters;
