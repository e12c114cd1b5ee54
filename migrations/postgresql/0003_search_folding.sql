-- 0003_search_folding (PostgreSQL): lexemes are now cut and folded by
-- SQLite's FTS5 tokenizer (unicode61, remove_diacritics 2;
-- storage/fts_tokenizer.h), so "cafe" finds "Café" as on SQLite. A row's
-- `folding` says which rules made its tsv: 1 = the earlier ASCII-only rules,
-- 2 = the current ones. The rows stored before are re-indexed from their
-- text by the application right after this migration
-- (PostgresSessionStore::Open, under the migration lock), in batches.
ALTER TABLE items_search ADD COLUMN folding SMALLINT NOT NULL DEFAULT 1;
ALTER TABLE items_search ALTER COLUMN folding SET DEFAULT 2;
CREATE INDEX items_search_refold ON items_search(item_id) WHERE folding < 2;
