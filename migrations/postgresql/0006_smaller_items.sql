-- 0006_smaller_items (PostgreSQL): item bodies packed as SQLite packs them,
-- item kinds as small integers (issue 27: a smaller store, the same items
-- and the same search).
--
-- From this schema on, items.body holds what storage/packed_text.h makes of
-- the body (deflate with the dictionary of the shapes Codex rollouts repeat;
-- first byte 0x01) when that saves an eighth of it, and the body itself
-- otherwise (PostgresSessionStore: BodyParam / BodyFromStored). The first
-- byte tells them apart: a JSON item starts with '{' or white space, and a
-- body whose first byte is below 0x09 is stored behind a 0x00 byte.
-- A codex of schema 5 would read a packed body as its bytes, so it must see
-- this store as newer (the runner's newer-schema refusal), hence a migration.
--
-- Rows written before stay as they are (readable as bodies that were not
-- worth packing: PostgreSQL cannot deflate with the dictionary in SQL);
-- only the rare body that starts with a byte below 0x09 is escaped here, so
-- the UPDATE rewrites next to no rows. `codex sessions migrate` into a new
-- store packs everything it copies.
--
-- items.kind becomes the number PostgresSessionStore gives each kind
-- (kStoredKinds in storage/postgres_store_internal.h; a name it does not
-- know is 0, "other", as reading it gave before): 2 bytes in the row and in
-- items_session (which every chain walk reads) where the name took 8-24.
-- Changing the type rewrites items and its indexes once, holding the
-- table's exclusive lock (other processes wait, then find the new schema);
-- the rewrite also drops the dead rows the UPDATE above leaves.
--
-- One transaction, as every migration: a crash leaves the store at 0005.
UPDATE items SET body = '\x00'::bytea || body
  WHERE length(body) > 0 AND get_byte(body, 0) < 9;
ALTER TABLE items ALTER COLUMN kind TYPE SMALLINT USING CASE kind
  WHEN 'message' THEN 1
  WHEN 'reasoning' THEN 2
  WHEN 'function_call' THEN 3
  WHEN 'function_call_output' THEN 4
  WHEN 'custom_tool_call' THEN 5
  WHEN 'custom_tool_call_output' THEN 6
  WHEN 'local_shell_call' THEN 7
  WHEN 'local_shell_call_output' THEN 8
  WHEN 'compaction' THEN 9
  WHEN 'compaction_checkpoint' THEN 10
  ELSE 0 END;
