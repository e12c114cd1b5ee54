-- 0007_packed_text: item bodies and event payloads are stored packed when
-- that makes them smaller (storage/packed_text.h): deflate with a preset
-- dictionary of the shapes rollouts repeat, kept as a BLOB; a TEXT value is
-- the text itself. Together they were nine tenths of a store's bytes, and the
-- store was larger than the JSONL it was imported from; packed, tool outputs
-- and event payloads take a third or less (encrypted reasoning, base64 of
-- random bytes, only loses the quarter its alphabet leaves). Reads go through codex_text() / the application,
-- which unpack a BLOB; the search index (items_fts over the view items_text)
-- reads the body through codex_search_text(), which unpacks it as well.
--
-- The rows stored before are packed here with codex_pack_text(), registered by
-- the application (a TEXT it cannot shrink stays TEXT). The space they free is
-- reused by new rows; the file shrinks only with VACUUM.
UPDATE items SET body = codex_pack_text(body) WHERE typeof(body) = 'text';
UPDATE events SET payload = codex_pack_text(payload) WHERE typeof(payload) = 'text';
