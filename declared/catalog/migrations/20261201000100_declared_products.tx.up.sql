-- The declared products an operator manages with the reference server's
-- products commands: each product's object as declared (the products-file
-- form, compacted), its version (1 at add, one more at each update or
-- re-add), and when it was retired (NULL: in the catalogue). Times are
-- Unix microseconds (UTC) in BIGINT columns, so the same SQL runs on
-- SQLite and Postgres. Idempotent, so two processes migrating at once do
-- no harm.
CREATE TABLE IF NOT EXISTS declared_products (
    name       VARCHAR(64) NOT NULL PRIMARY KEY,
    version    BIGINT      NOT NULL,
    source     TEXT        NOT NULL,
    created_at BIGINT      NOT NULL,
    updated_at BIGINT      NOT NULL,
    retired_at BIGINT
);
