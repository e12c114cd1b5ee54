-- 0010_search_sketch (PostgreSQL): items.search_sketch, for each of 16
-- buckets of lexemes an upper bound on how often a lexeme of the bucket
-- occurs in the item (storage/pg_search.h, SearchSketch). A search ranks by
-- BM25 (migration 0008), which grows with a word's count in the row; from
-- the row's size and this bound it knows, before reading any lexeme, which
-- rows cannot reach a shallow page, and counts the query's words (ts_rank,
-- a third of the ranking query) only in the others
-- (docs/performance.md, "PostgreSQL search: a bound on each match").
--
-- A lexeme's bucket is the first byte of the SHA-256 of its UTF-8 bytes,
-- & 15; its class ceil(log2(count)) (0 for one occurrence, what an empty
-- bucket says), 15 for no bound; bucket b's class in bits 4b..4b+3. Codex
-- writes the sketch with the lexemes, counting every token of the text; here
-- it is made from the stored tsvector's positions, so an item whose
-- tsvector lost some (words past position 16383, a lexeme at its cap of
-- 256) gets -1 (every class 15: no bound), as does one the next open
-- re-indexes (items_refold) until then. NULL for an item without lexemes.
--
-- The GIN index is made again after the update, as 0008 did, and the
-- search_totals trigger, which the update would run over every row for no
-- change (the token counts stay), is off meanwhile. One transaction.
DROP INDEX items_tsv;
ALTER TABLE items DISABLE TRIGGER items_search_totals_update;
ALTER TABLE items ADD COLUMN search_sketch BIGINT;
UPDATE items AS i SET search_sketch =
  CASE WHEN i.search_tokens IS NULL OR i.search_tokens >= 16383
            OR EXISTS (SELECT 1 FROM items_refold AS r WHERE r.item_id = i.id)
            OR EXISTS (SELECT 1 FROM unnest(i.tsv) AS u
                       WHERE u.positions IS NULL OR cardinality(u.positions) >= 256)
       THEN -1
       ELSE (SELECT COALESCE(BIT_OR(x.c::BIGINT << (4 * x.b)), 0) FROM
               (SELECT get_byte(sha256(convert_to(u.lexeme, 'UTF8')), 0) & 15 AS b,
                       MAX(length(ltrim((cardinality(u.positions) - 1)::BIT(32)::TEXT, '0')))
                         AS c
                FROM unnest(i.tsv) AS u WHERE cardinality(u.positions) >= 2
                GROUP BY 1) AS x)
  END
  WHERE i.tsv IS NOT NULL;
ALTER TABLE items ENABLE TRIGGER items_search_totals_update;
CREATE INDEX items_tsv ON items USING GIN (tsv) WITH (fastupdate = off);
