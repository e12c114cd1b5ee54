-- 0002_search: full-text search over message and tool-output text.
--
-- items_fts holds one row per searchable item, rowid = items.id. Searchable:
-- user and assistant messages (minus the injected environment context and
-- AGENTS.md instructions) and function/custom tool call outputs. The text is
-- extracted from the JSON body by the triggers below, so the index is kept in
-- sync inside the very transaction that appends the item.
CREATE VIRTUAL TABLE items_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');

-- The searchable text of an item body: `content` of a message or `output` of a
-- tool output, either a string or an array of parts with "text".
CREATE TRIGGER items_fts_insert AFTER INSERT ON items
WHEN json_valid(NEW.body)
 AND ((NEW.kind = 'message' AND NEW.role IN ('user', 'assistant'))
      OR NEW.kind IN ('function_call_output', 'custom_tool_call_output'))
BEGIN
  INSERT INTO items_fts(rowid, text)
  SELECT NEW.id, t FROM (
    SELECT CASE json_type(NEW.body, p)
             WHEN 'text' THEN json_extract(NEW.body, p)
             WHEN 'array' THEN (SELECT group_concat(json_extract(e.value, '$.text'), char(10))
                                FROM json_each(NEW.body, p) AS e
                                WHERE e.type = 'object')
           END AS t
    FROM (SELECT CASE NEW.kind WHEN 'message' THEN '$.content' ELSE '$.output' END AS p))
  WHERE t IS NOT NULL AND t <> ''
    AND substr(ltrim(t), 1, 21) <> '<environment_context>'
    AND substr(ltrim(t), 1, 19) <> '<user_instructions>'
    AND substr(ltrim(t), 1, 11) <> '# AGENTS.md';
END;

CREATE TRIGGER items_fts_delete AFTER DELETE ON items
BEGIN
  DELETE FROM items_fts WHERE rowid = OLD.id;
END;

-- Index what earlier versions stored.
INSERT INTO items_fts(rowid, text)
SELECT id, t FROM (
  SELECT i.id AS id,
         CASE json_type(i.body, i.p)
           WHEN 'text' THEN json_extract(i.body, i.p)
           WHEN 'array' THEN (SELECT group_concat(json_extract(e.value, '$.text'), char(10))
                              FROM json_each(i.body, i.p) AS e
                              WHERE e.type = 'object')
         END AS t
  FROM (SELECT id, body, CASE kind WHEN 'message' THEN '$.content' ELSE '$.output' END AS p
        FROM items
        WHERE json_valid(body)
          AND ((kind = 'message' AND role IN ('user', 'assistant'))
               OR kind IN ('function_call_output', 'custom_tool_call_output'))) AS i)
WHERE t IS NOT NULL AND t <> ''
  AND substr(ltrim(t), 1, 21) <> '<environment_context>'
  AND substr(ltrim(t), 1, 19) <> '<user_instructions>'
  AND substr(ltrim(t), 1, 11) <> '# AGENTS.md';
