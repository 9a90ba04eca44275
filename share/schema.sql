-- Chalk's telemetry and lesson store. Applied by core/store on first use by every
-- process (embedded PGlite or any Postgres >= 14). Idempotent, and upgrades in place:
-- tables, columns and indexes are only ever added (save indexes and generated columns a later
-- version replaced, which hold nothing of their own), new columns are nullable, so a
-- database made by an older version keeps every row. The caller runs this file in one
-- transaction, under an advisory lock, and skips it when chalk_schema already holds
-- SCHEMA_VERSION (kept in core/store/schema.ts).
SET LOCAL client_min_messages = warning;

CREATE TABLE IF NOT EXISTS chalk_schema (
  id integer PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  version integer NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

-- pg_trgm (trusted, in every Postgres contrib and in PGlite) and pgvector, each only when available.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pgvector is available but this role may not create it; semantic recall stays off';
    END;
  END IF;
END $$;

-- One row per agent call.
CREATE TABLE IF NOT EXISTS runs (
  id bigserial PRIMARY KEY,
  repo text NOT NULL,
  ticket text NOT NULL,
  branch text NOT NULL,
  loop integer NOT NULL,
  kind text NOT NULL,
  agent_status text NOT NULL,
  rubric_exit integer NOT NULL,
  progressed boolean NOT NULL,
  model text NOT NULL,
  prompts text NOT NULL,
  cost_usd numeric(10, 4) NOT NULL,
  budget_usd numeric(10, 4) NOT NULL,
  duration_s integer NOT NULL,
  input_tokens bigint NOT NULL,
  output_tokens bigint NOT NULL,
  cache_read_tokens bigint NOT NULL,
  cache_write_tokens bigint NOT NULL,
  turns integer NOT NULL,
  denials integer NOT NULL,
  lessons integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE runs ADD COLUMN IF NOT EXISTS run_id text;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS tests_hash text;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS failing integer;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS failing_tests text;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS first_error text;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS tree_id text;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS verdict text;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS fp_rules text;
-- Failing tests that passed when the rubric ran again on the same tree (one per line), left out of the fingerprint.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS flaky_tests text;
CREATE INDEX IF NOT EXISTS runs_ticket_idx ON runs (repo, ticket);
CREATE INDEX IF NOT EXISTS runs_created_idx ON runs (created_at);
CREATE INDEX IF NOT EXISTS runs_run_id_idx ON runs (run_id);
-- Version 2, for the report card over a year of a busy team (a million rows): its window for
-- one repository, and the later loops of a run (was the decider right, did stopping pay).
CREATE INDEX IF NOT EXISTS runs_repo_created_idx ON runs (repo, created_at);
CREATE INDEX IF NOT EXISTS runs_run_loop_idx ON runs (run_id, loop);

-- Ticket milestones: detention, submitted, spec_blocked, ready.
CREATE TABLE IF NOT EXISTS events (
  id bigserial PRIMARY KEY,
  repo text NOT NULL,
  ticket text NOT NULL,
  kind text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS events_ticket_idx ON events (repo, ticket);
CREATE INDEX IF NOT EXISTS events_created_idx ON events (created_at);

-- One lesson per detention, resolved by office hours.
CREATE TABLE IF NOT EXISTS lessons (
  id bigserial PRIMARY KEY,
  repo text NOT NULL,
  ticket text NOT NULL,
  signature text NOT NULL,
  resolution text,
  lesson text,
  resolved_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  resolved_at timestamptz,
  memory_synced_at timestamptz
);
ALTER TABLE lessons ADD COLUMN IF NOT EXISTS run_id text;
ALTER TABLE lessons ADD COLUMN IF NOT EXISTS fingerprint text;
ALTER TABLE lessons ADD COLUMN IF NOT EXISTS first_error text;
ALTER TABLE lessons ADD COLUMN IF NOT EXISTS scope text;
CREATE INDEX IF NOT EXISTS lessons_fingerprint_idx ON lessons (repo, fingerprint);
CREATE INDEX IF NOT EXISTS lessons_ticket_idx ON lessons (repo, ticket);
CREATE INDEX IF NOT EXISTS lessons_created_idx ON lessons (created_at);
-- Version 3: was a run detained (the report card asks it of every ledger run and decider answer).
CREATE INDEX IF NOT EXISTS lessons_run_idx ON lessons (run_id);
-- Version 5: a person can forget a lesson (`chalk lessons forget`); a forgotten lesson is never recalled.
ALTER TABLE lessons ADD COLUMN IF NOT EXISTS forgotten_at timestamptz;

-- The embedding: vector(384) with an HNSW cosine index where pgvector is installed, else real[].
-- A real[] column left by a server without pgvector is converted once pgvector is there.
DO $$
DECLARE
  has_vector boolean := EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector');
  col_type text := (
    SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
    WHERE a.attrelid = 'lessons'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped
  );
BEGIN
  IF has_vector THEN
    IF col_type IS NULL THEN
      EXECUTE 'ALTER TABLE lessons ADD COLUMN embedding vector(384)';
    ELSIF col_type <> 'vector(384)' THEN
      EXECUTE 'ALTER TABLE lessons ALTER COLUMN embedding TYPE vector(384) USING embedding::vector(384)';
    END IF;
    EXECUTE 'CREATE INDEX IF NOT EXISTS lessons_embedding_hnsw ON lessons USING hnsw (embedding vector_cosine_ops)';
  ELSIF col_type IS NULL THEN
    EXECUTE 'ALTER TABLE lessons ADD COLUMN embedding real[]';
  END IF;
END $$;

-- Trigram indexes for recall by text, where pg_trgm is installed.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE 'CREATE INDEX IF NOT EXISTS lessons_signature_trgm ON lessons USING gin (signature gin_trgm_ops)';
    EXECUTE 'CREATE INDEX IF NOT EXISTS lessons_first_error_trgm ON lessons USING gin (first_error gin_trgm_ops)';
  END IF;
END $$;

-- Version 6: each text's count of distinct trigrams (recall's n; similarity is shared / (n + m - shared)).
-- chalk_knn_trgms() is the bound version 6's nearest-neighbour index had on a text's trigrams (an index
-- row holds at most 8,191 bytes); version 9's bitmaps have no such bound and replace its indexes.
CREATE OR REPLACE FUNCTION chalk_knn_trgms() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 2000 $$;
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'lessons'::regclass AND attname = 'signature_trgms' AND NOT attisdropped) THEN
      EXECUTE 'ALTER TABLE lessons ADD COLUMN signature_trgms integer GENERATED ALWAYS AS
        (coalesce(array_length(show_trgm(signature), 1), 0)) STORED';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'lessons'::regclass AND attname = 'first_error_trgms' AND NOT attisdropped) THEN
      EXECUTE 'ALTER TABLE lessons ADD COLUMN first_error_trgms integer GENERATED ALWAYS AS
        (coalesce(array_length(show_trgm(first_error), 1), 0)) STORED';
    END IF;
  END IF;
END $$;

-- Version 5: each lesson a loop's prompt was given, with the loop's `runs` row (did the loop then pass?).
CREATE TABLE IF NOT EXISTS lesson_recalls (
  id bigserial PRIMARY KEY,
  call_id bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  run_id text,
  loop integer NOT NULL,
  lesson_id bigint NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
  how text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS lesson_recalls_lesson_idx ON lesson_recalls (lesson_id);
CREATE INDEX IF NOT EXISTS lesson_recalls_call_idx ON lesson_recalls (call_id);
CREATE INDEX IF NOT EXISTS lesson_recalls_run_idx ON lesson_recalls (run_id, loop);

-- One row per decider question, or per call that got no answer.
CREATE TABLE IF NOT EXISTS decisions (
  id bigserial PRIMARY KEY,
  call_id bigint REFERENCES runs (id) ON DELETE CASCADE,
  run_id text,
  kind text NOT NULL,
  question text NOT NULL,
  answer text,
  confidence numeric(4, 3),
  threshold numeric(4, 3),
  mode text NOT NULL,
  latency_ms integer,
  acted boolean NOT NULL DEFAULT false,
  lesson_id bigint,
  model text,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE decisions ADD COLUMN IF NOT EXISTS url text;
CREATE INDEX IF NOT EXISTS decisions_run_idx ON decisions (run_id);
CREATE INDEX IF NOT EXISTS decisions_call_idx ON decisions (call_id);
CREATE INDEX IF NOT EXISTS decisions_created_idx ON decisions (created_at);

-- Version 8: where each row was born, for `chalk db copy` (core/store/copy/). Every database has
-- its own `origin` (a random id made once); a row copied from another database keeps that
-- database's origin and its id there (`origin_id`), and a row born here has neither. The unique
-- index makes a second copy of the same row a no-op, and rows from two machines never collide.
ALTER TABLE chalk_schema ADD COLUMN IF NOT EXISTS origin text NOT NULL DEFAULT gen_random_uuid()::text;
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['runs', 'events', 'lessons', 'lesson_recalls', 'decisions'] LOOP
    EXECUTE format('ALTER TABLE %I ADD COLUMN IF NOT EXISTS origin text', t);
    EXECUTE format('ALTER TABLE %I ADD COLUMN IF NOT EXISTS origin_id bigint', t);
    EXECUTE format('CREATE UNIQUE INDEX IF NOT EXISTS %I ON %I (origin, origin_id)', t || '_origin_idx', t);
  END LOOP;
END $$;

-- Version 6's trigram indexes and version 7's lesson_trgms, which version 9's bitmaps replace (they hold
-- nothing of their own: each is made from the lessons' texts).
DROP INDEX IF EXISTS lessons_signature_knn, lessons_first_error_knn, lessons_signature_long, lessons_first_error_long;
DROP TRIGGER IF EXISTS lesson_trgms_insert ON lessons;
DROP TRIGGER IF EXISTS lesson_trgms_update ON lessons;
DROP TABLE IF EXISTS lesson_trgms;
DROP FUNCTION IF EXISTS chalk_lesson_trgms();
-- Version 5's way of spec-mode recall (a generated trigram count, a partial GIN index per band of it).
DROP INDEX IF EXISTS lessons_spec_trgm_1, lessons_spec_trgm_8, lessons_spec_trgm_16,
  lessons_spec_trgm_32, lessons_spec_trgm_64, lessons_spec_trgm_128, lessons_spec_trgm_256,
  lessons_spec_trgm_512;
ALTER TABLE lessons DROP COLUMN IF EXISTS recall_trgms;
DROP FUNCTION IF EXISTS chalk_spec_bands();

-- Version 9: recall's bitmaps (core/store/lesson-bits.ts reads them). A lesson's slot is its id: chunk
-- id >> 13, bit id & 8191 of that chunk's bitmaps. Each row of lesson_bits is the set of lessons of one
-- chunk with one key: a trigram of the signature (kind 's') or of coalesce(first_error, signature)
-- ('c'); bit j of that text's trigram count ('n' for the signature, 'm' for the other, name j);
-- recallable ('r': resolved, not forgotten), scoped general ('g'), with a first error ('e'); the
-- repository ('p', name the repository). Up to 256 lessons a row is a list (`list`: each slot as two
-- bytes, high byte first, ascending), beyond that an 8,192-bit bitmap (`bits`). Triggers keep it: a
-- statement's new lessons at once, a changed or deleted lesson by its own keys; every change sets or
-- clears only its own lesson's bit, so concurrent writers commute.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    CREATE TABLE IF NOT EXISTS lesson_bits (
      kind text NOT NULL,
      name text NOT NULL,
      chunk integer NOT NULL,
      list bytea,
      bits bit(8192),
      PRIMARY KEY (kind, name, chunk),
      CHECK ((list IS NULL) <> (bits IS NULL))
    );
    -- A lesson's keys (see above).
    CREATE OR REPLACE FUNCTION chalk_lesson_keys(sig text, fe text, sig_n integer, fe_n integer,
        recallable boolean, scope text, repo text)
      RETURNS TABLE (kind text, name text) LANGUAGE sql IMMUTABLE AS $f$
      SELECT 's', t FROM unnest(show_trgm(sig)) t
      UNION ALL SELECT 'c', t FROM unnest(show_trgm(coalesce(fe, sig))) t
      UNION ALL SELECT 'n', j::text FROM generate_series(0, 30) j WHERE (sig_n >> j) & 1 = 1
      UNION ALL SELECT 'm', j::text FROM generate_series(0, 30) j
        WHERE ((CASE WHEN fe IS NULL THEN sig_n ELSE fe_n END) >> j) & 1 = 1
      UNION ALL SELECT 'r', '' WHERE recallable
      UNION ALL SELECT 'g', '' WHERE scope = 'general'
      UNION ALL SELECT 'e', '' WHERE fe IS NOT NULL
      UNION ALL SELECT 'p', repo
    $f$;
    -- A list's slots, and slots as a list (distinct, ascending).
    CREATE OR REPLACE FUNCTION chalk_list_slots(l bytea) RETURNS integer[] LANGUAGE sql IMMUTABLE AS $f$
      SELECT coalesce(array_agg((get_byte(l, 2 * i) << 8) | get_byte(l, 2 * i + 1) ORDER BY i), '{}')
      FROM generate_series(0, coalesce(length(l), 0) / 2 - 1) i
    $f$;
    CREATE OR REPLACE FUNCTION chalk_slots_list(s integer[]) RETURNS bytea LANGUAGE sql IMMUTABLE AS $f$
      SELECT coalesce(string_agg(int2send(x::smallint), ''::bytea ORDER BY x), ''::bytea)
      FROM (SELECT DISTINCT unnest(s) AS x) u
    $f$;
    CREATE OR REPLACE FUNCTION chalk_slots_bits(s integer[]) RETURNS bit LANGUAGE sql IMMUTABLE AS $f$
      SELECT coalesce(bit_or(set_bit(B'0'::bit(8192), x, 1)), B'0'::bit(8192)) FROM unnest(s) x
    $f$;
    -- Two rows' union: a list while it has at most 256 lessons, else NULL (chalk_bits_or has it).
    CREATE OR REPLACE FUNCTION chalk_bits_union(b1 bit, l1 bytea, b2 bit, l2 bytea)
      RETURNS bytea LANGUAGE sql IMMUTABLE AS $f$
      SELECT CASE WHEN b1 IS NULL AND b2 IS NULL THEN
        (SELECT CASE WHEN count(DISTINCT x) <= 256 THEN chalk_slots_list(array_agg(x)) END
         FROM unnest(chalk_list_slots(l1) || chalk_list_slots(l2)) x)
      END
    $f$;
    CREATE OR REPLACE FUNCTION chalk_bits_or(b1 bit, l1 bytea, b2 bit, l2 bytea)
      RETURNS bit LANGUAGE sql IMMUTABLE AS $f$
      SELECT CASE WHEN chalk_bits_union(b1, l1, b2, l2) IS NULL
        THEN coalesce(b1, chalk_slots_bits(chalk_list_slots(l1))) | coalesce(b2, chalk_slots_bits(chalk_list_slots(l2))) END
    $f$;
    -- Adds lessons (ids) to keys: one row per key and chunk, in key order (concurrent writers lock
    -- rows in the same order).
    CREATE OR REPLACE FUNCTION chalk_bits_add(keys text[], names text[], ids bigint[]) RETURNS void
      LANGUAGE sql AS $f$
      INSERT INTO lesson_bits AS b (kind, name, chunk, list, bits)
      SELECT kind, name, chunk, CASE WHEN cardinality(slots) <= 256 THEN chalk_slots_list(slots) END,
             CASE WHEN cardinality(slots) > 256 THEN chalk_slots_bits(slots) END
      FROM (SELECT k AS kind, n AS name, (i >> 13)::int AS chunk, array_agg(DISTINCT (i & 8191)::int) AS slots
            FROM unnest(keys, names, ids) AS x(k, n, i) GROUP BY 1, 2, 3) g
      ORDER BY kind, name, chunk
      ON CONFLICT (kind, name, chunk) DO UPDATE SET
        list = chalk_bits_union(b.bits, b.list, EXCLUDED.bits, EXCLUDED.list),
        bits = chalk_bits_or(b.bits, b.list, EXCLUDED.bits, EXCLUDED.list)
    $f$;
    -- Clears lessons (ids) from keys.
    CREATE OR REPLACE FUNCTION chalk_bits_clear(keys text[], names text[], ids bigint[]) RETURNS void
      LANGUAGE sql AS $f$
      UPDATE lesson_bits b SET
        list = CASE WHEN b.list IS NOT NULL THEN
          (SELECT chalk_slots_list(coalesce(array_agg(x), '{}')) FROM unnest(chalk_list_slots(b.list)) x
           WHERE x <> ALL (g.slots)) END,
        bits = b.bits & ~chalk_slots_bits(g.slots)
      FROM (SELECT k AS kind, n AS name, (i >> 13)::int AS chunk, array_agg((i & 8191)::int) AS slots
            FROM unnest(keys, names, ids) AS x(k, n, i) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) g
      WHERE b.kind = g.kind AND b.name = g.name AND b.chunk = g.chunk
    $f$;
    CREATE OR REPLACE FUNCTION chalk_lesson_bits_insert() RETURNS trigger LANGUAGE plpgsql AS $f$
    BEGIN
      PERFORM chalk_bits_add(array_agg(k.kind), array_agg(k.name), array_agg(a.id))
      FROM added a, LATERAL chalk_lesson_keys(a.signature, a.first_error, a.signature_trgms, a.first_error_trgms,
        a.resolved_at IS NOT NULL AND a.forgotten_at IS NULL, a.scope, a.repo) k;
      RETURN NULL;
    END $f$;
    CREATE OR REPLACE FUNCTION chalk_lesson_bits_change() RETURNS trigger LANGUAGE plpgsql AS $f$
    BEGIN
      PERFORM chalk_bits_clear(array_agg(kind), array_agg(name), array_fill(OLD.id, ARRAY[count(*)::int]))
      FROM (SELECT * FROM chalk_lesson_keys(OLD.signature, OLD.first_error, OLD.signature_trgms,
              OLD.first_error_trgms, OLD.resolved_at IS NOT NULL AND OLD.forgotten_at IS NULL, OLD.scope, OLD.repo)
            EXCEPT SELECT * FROM chalk_lesson_keys(NEW.signature, NEW.first_error, NEW.signature_trgms,
              NEW.first_error_trgms, NEW.resolved_at IS NOT NULL AND NEW.forgotten_at IS NULL, NEW.scope, NEW.repo)
            WHERE TG_OP = 'UPDATE' AND NEW.id = OLD.id) gone;
      IF TG_OP = 'UPDATE' THEN
        PERFORM chalk_bits_add(array_agg(kind), array_agg(name), array_fill(NEW.id, ARRAY[count(*)::int]))
        FROM (SELECT * FROM chalk_lesson_keys(NEW.signature, NEW.first_error, NEW.signature_trgms,
                NEW.first_error_trgms, NEW.resolved_at IS NOT NULL AND NEW.forgotten_at IS NULL, NEW.scope, NEW.repo)
              EXCEPT SELECT * FROM chalk_lesson_keys(OLD.signature, OLD.first_error, OLD.signature_trgms,
                OLD.first_error_trgms, OLD.resolved_at IS NOT NULL AND OLD.forgotten_at IS NULL, OLD.scope, OLD.repo)
              WHERE NEW.id = OLD.id) come;
      END IF;
      RETURN NULL;
    END $f$;
    CREATE OR REPLACE FUNCTION chalk_lesson_bits_truncate() RETURNS trigger LANGUAGE plpgsql AS $f$
    BEGIN
      TRUNCATE lesson_bits;
      RETURN NULL;
    END $f$;
    CREATE OR REPLACE TRIGGER lesson_bits_insert AFTER INSERT ON lessons
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chalk_lesson_bits_insert();
    CREATE OR REPLACE TRIGGER lesson_bits_update
      AFTER UPDATE OF id, repo, signature, first_error, resolved_at, forgotten_at, scope ON lessons
      FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.repo IS DISTINCT FROM NEW.repo
        OR OLD.signature IS DISTINCT FROM NEW.signature OR OLD.first_error IS DISTINCT FROM NEW.first_error
        OR (OLD.resolved_at IS NULL) <> (NEW.resolved_at IS NULL) OR (OLD.forgotten_at IS NULL) <> (NEW.forgotten_at IS NULL)
        OR OLD.scope IS DISTINCT FROM NEW.scope)
      EXECUTE FUNCTION chalk_lesson_bits_change();
    CREATE OR REPLACE TRIGGER lesson_bits_delete AFTER DELETE ON lessons
      FOR EACH ROW EXECUTE FUNCTION chalk_lesson_bits_change();
    CREATE OR REPLACE TRIGGER lesson_bits_truncate AFTER TRUNCATE ON lessons
      FOR EACH STATEMENT EXECUTE FUNCTION chalk_lesson_bits_truncate();
    -- Every lesson's bits made afresh in one statement (each key and chunk's row written once, as
    -- chalk_bits_add writes a new row: a list up to 256 lessons, else a bitmap).
    CREATE OR REPLACE FUNCTION chalk_lesson_bits_rebuild() RETURNS void LANGUAGE plpgsql AS $f$
    BEGIN
      DELETE FROM lesson_bits;
      INSERT INTO lesson_bits (kind, name, chunk, list, bits)
      SELECT kind, name, chunk,
             CASE WHEN count(*) <= 256 THEN string_agg(int2send(slot::smallint), ''::bytea ORDER BY slot) END,
             CASE WHEN count(*) > 256 THEN bit_or(set_bit(B'0'::bit(8192), slot, 1)) END
      FROM (SELECT DISTINCT k.kind, k.name, (l.id >> 13)::int AS chunk, (l.id & 8191)::int AS slot
            FROM lessons l, LATERAL chalk_lesson_keys(l.signature, l.first_error, l.signature_trgms,
              l.first_error_trgms, l.resolved_at IS NOT NULL AND l.forgotten_at IS NULL, l.scope, l.repo) k) x
      GROUP BY kind, name, chunk;
    END $f$;
    -- Lessons written before version 9 (a database that has its bits already is left as it is).
    IF NOT EXISTS (SELECT 1 FROM lesson_bits) THEN
      PERFORM chalk_lesson_bits_rebuild();
    END IF;
  END IF;
END $$;

-- Version 10: spec-mode recall's anchors (core/store/lessons.ts, specLessons). Spec mode's rule,
-- word_similarity(coalesce(first_error, signature), spec) > 0.6, needs a lesson to have more than
-- 0.6 of its n distinct trigrams among the spec's (c / n bounds the score). A lesson's anchors are
-- chalk_spec_anchor_count(n) of its trigrams, the ones fewest lessons held when it was written
-- (lesson_bits' 'c' rows; a tie goes to a trigram without a space, then to the trigram): a lesson
-- that can pass has at least 0.5994 n - (n - anchors) of its anchors in the spec, whichever they
-- are, and rare trigrams are rarely in a spec by chance. lesson_spec_anchors is, per trigram and
-- chunk of lesson ids, the lessons it anchors, as lesson_bits holds its keys (a list of two-byte
-- slots up to 256 lessons, else a bitmap); recall counts the spec's anchors per lesson from it
-- and reads only the texts of the lessons that reach that count. Triggers keep it (fired after
-- lesson_bits' own, whose counts they read): a statement's new lessons at once, a lesson whose
-- text changes or which is deleted by all its trigrams; truncate empties it. Which trigrams anchor
-- a lesson depends on when it was written, never on whether it is recalled: made afresh
-- (chalk_spec_anchors_rebuild(), the back-fill) they may differ, and recall is the same.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    CREATE TABLE IF NOT EXISTS lesson_spec_anchors (
      name text NOT NULL,
      chunk integer NOT NULL,
      list bytea,
      bits bit(8192),
      PRIMARY KEY (name, chunk),
      CHECK ((list IS NULL) <> (bits IS NULL))
    );
    -- How many anchors a text with n distinct trigrams has: 0.6 n up to 150 trigrams, 0.5 n beyond
    -- (a long text shares few of its trigrams with a spec by chance), rounded up.
    CREATE OR REPLACE FUNCTION chalk_spec_anchor_count(n integer) RETURNS integer LANGUAGE sql IMMUTABLE AS $f$
      SELECT CASE WHEN n <= 150 THEN (3 * n + 4) / 5 ELSE (n + 1) / 2 END
    $f$;
    -- The anchors of lessons (ids, and their coalesce(first_error, signature)).
    CREATE OR REPLACE FUNCTION chalk_spec_anchors(ids bigint[], texts text[])
      RETURNS TABLE (lesson_id bigint, trgm text) LANGUAGE sql STABLE AS $f$
      WITH lt AS (SELECT x.id, g.trgm FROM unnest(ids, texts) AS x (id, txt), unnest(show_trgm(x.txt)) AS g (trgm)),
      df AS (SELECT b.name, sum(CASE WHEN b.bits IS NULL THEN length(b.list) / 2 ELSE bit_count(b.bits) END) AS df
             FROM lesson_bits b WHERE b.kind = 'c' AND b.name = ANY (ARRAY(SELECT DISTINCT trgm FROM lt)) GROUP BY b.name),
      ranked AS (SELECT lt.id, lt.trgm, count(*) OVER (PARTITION BY lt.id) AS n,
                        row_number() OVER (PARTITION BY lt.id
                          ORDER BY coalesce(df.df, 0), strpos(lt.trgm, ' ') > 0, lt.trgm COLLATE "C") AS k
                 FROM lt LEFT JOIN df ON df.name = lt.trgm)
      SELECT id, trgm FROM ranked WHERE k <= chalk_spec_anchor_count(n::integer)
    $f$;
    -- Adds lessons (ids) to trigrams' rows, and clears them, as chalk_bits_add and chalk_bits_clear do.
    CREATE OR REPLACE FUNCTION chalk_spec_anchors_add(names text[], ids bigint[]) RETURNS void LANGUAGE sql AS $f$
      INSERT INTO lesson_spec_anchors AS b (name, chunk, list, bits)
      SELECT name, chunk, CASE WHEN cardinality(slots) <= 256 THEN chalk_slots_list(slots) END,
             CASE WHEN cardinality(slots) > 256 THEN chalk_slots_bits(slots) END
      FROM (SELECT n AS name, (i >> 13)::int AS chunk, array_agg(DISTINCT (i & 8191)::int) AS slots
            FROM unnest(names, ids) AS x (n, i) GROUP BY 1, 2) g
      ORDER BY name, chunk
      ON CONFLICT (name, chunk) DO UPDATE SET
        list = chalk_bits_union(b.bits, b.list, EXCLUDED.bits, EXCLUDED.list),
        bits = chalk_bits_or(b.bits, b.list, EXCLUDED.bits, EXCLUDED.list)
    $f$;
    CREATE OR REPLACE FUNCTION chalk_spec_anchors_clear(names text[], ids bigint[]) RETURNS void LANGUAGE sql AS $f$
      UPDATE lesson_spec_anchors b SET
        list = CASE WHEN b.list IS NOT NULL THEN
          (SELECT chalk_slots_list(coalesce(array_agg(x), '{}')) FROM unnest(chalk_list_slots(b.list)) x
           WHERE x <> ALL (g.slots)) END,
        bits = b.bits & ~chalk_slots_bits(g.slots)
      FROM (SELECT n AS name, (i >> 13)::int AS chunk, array_agg((i & 8191)::int) AS slots
            FROM unnest(names, ids) AS x (n, i) GROUP BY 1, 2 ORDER BY 1, 2) g
      WHERE b.name = g.name AND b.chunk = g.chunk
    $f$;
    CREATE OR REPLACE FUNCTION chalk_spec_anchors_insert() RETURNS trigger LANGUAGE plpgsql AS $f$
    DECLARE
      ids bigint[];
      texts text[];
    BEGIN
      SELECT array_agg(id ORDER BY id), array_agg(coalesce(first_error, signature) ORDER BY id) INTO ids, texts
      FROM added;
      PERFORM chalk_spec_anchors_add(array_agg(a.trgm), array_agg(a.lesson_id)) FROM chalk_spec_anchors(ids, texts) a;
      RETURN NULL;
    END $f$;
    CREATE OR REPLACE FUNCTION chalk_spec_anchors_change() RETURNS trigger LANGUAGE plpgsql AS $f$
    DECLARE
      old_trgms text[] := show_trgm(coalesce(OLD.first_error, OLD.signature));
    BEGIN
      PERFORM chalk_spec_anchors_clear(old_trgms, array_fill(OLD.id, ARRAY[cardinality(old_trgms)]));
      IF TG_OP = 'UPDATE' THEN
        PERFORM chalk_spec_anchors_add(array_agg(a.trgm), array_agg(a.lesson_id))
        FROM chalk_spec_anchors(ARRAY[NEW.id], ARRAY[coalesce(NEW.first_error, NEW.signature)]) a;
      END IF;
      RETURN NULL;
    END $f$;
    CREATE OR REPLACE FUNCTION chalk_spec_anchors_truncate() RETURNS trigger LANGUAGE plpgsql AS $f$
    BEGIN
      TRUNCATE lesson_spec_anchors;
      RETURN NULL;
    END $f$;
    CREATE OR REPLACE TRIGGER lesson_spec_anchors_insert AFTER INSERT ON lessons
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chalk_spec_anchors_insert();
    CREATE OR REPLACE TRIGGER lesson_spec_anchors_update AFTER UPDATE OF id, signature, first_error ON lessons
      FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id
        OR coalesce(OLD.first_error, OLD.signature) IS DISTINCT FROM coalesce(NEW.first_error, NEW.signature))
      EXECUTE FUNCTION chalk_spec_anchors_change();
    CREATE OR REPLACE TRIGGER lesson_spec_anchors_delete AFTER DELETE ON lessons
      FOR EACH ROW EXECUTE FUNCTION chalk_spec_anchors_change();
    CREATE OR REPLACE TRIGGER lesson_spec_anchors_truncate AFTER TRUNCATE ON lessons
      FOR EACH STATEMENT EXECUTE FUNCTION chalk_spec_anchors_truncate();
    -- Every lesson's anchors made afresh in one statement, by the counts lesson_bits holds now.
    CREATE OR REPLACE FUNCTION chalk_spec_anchors_rebuild() RETURNS void LANGUAGE plpgsql AS $f$
    BEGIN
      DELETE FROM lesson_spec_anchors;
      INSERT INTO lesson_spec_anchors (name, chunk, list, bits)
      SELECT trgm, chunk,
             CASE WHEN count(*) <= 256 THEN string_agg(int2send(slot::smallint), ''::bytea ORDER BY slot) END,
             CASE WHEN count(*) > 256 THEN bit_or(set_bit(B'0'::bit(8192), slot, 1)) END
      FROM (SELECT a.trgm, (a.lesson_id >> 13)::int AS chunk, (a.lesson_id & 8191)::int AS slot
            FROM chalk_spec_anchors(ARRAY(SELECT id FROM lessons ORDER BY id),
                                    ARRAY(SELECT coalesce(first_error, signature) FROM lessons ORDER BY id)) a) x
      GROUP BY trgm, chunk;
    END $f$;
    -- Lessons written before version 10 (after version 9's bits, whose counts choose the anchors).
    IF NOT EXISTS (SELECT 1 FROM lesson_spec_anchors) THEN
      PERFORM chalk_spec_anchors_rebuild();
    END IF;
  END IF;
END $$;
-- Version 11: the report card's rollup (share/dashboard/ reads it; docs/architecture.md, "Report card").
-- Days are UTC days of runs.created_at. A window (created_at >= now() - N days) is read as the rows
-- before its first whole day from runs itself and every later day from these tables, so a card from the
-- rollup equals one from the rows. report_calls, report_loops (once for every repository, `every`, and
-- once for the row's own), report_tickets, report_tests with report_test_names add up rows; report_runs
-- holds each run's facts (the ledger's, lessons' help, its latest progress), made again from the run's
-- rows whenever one is folded in, so a late or copied loop is placed in its run's order. The rollup holds
-- nothing of its own: `chalk db copy` does not copy it (the target's triggers make it) and a database
-- written before version 11 is back-filled here. The loop-cost percentiles are exact: report_loops' 'cost'
-- histogram (chalk_report_bucket, two significant figures) finds the bucket of each rank, and
-- runs_loop_cost_idx the value in it.
-- Version 12: an insert only lists its rows in report_pending (one statement), and every 64th insert
-- statement, or one of 64 rows or more, folds every pending row into the rollup at once
-- (chalk_report_fold); the queries read pending rows from runs as they read the window's first partial
-- day, so the card is exact whatever is pending. An update or delete folds first, then makes the days
-- and runs it touched again from the rows; truncate empties it all. Every writer of the rollup holds one
-- exclusive lock. report_test_totals (each test's loops over all days: a window's loops are the totals
-- less the days before it when those are fewer), report_retry_keys (per UTC day of a run's first loop,
-- repository and retried failure: the retries with and without lessons, and how many passed),
-- report_run_days (the runs' facts by the day of their first loop) and report_run_seen (the runs by the
-- day of their latest row) make a long window read days, not rows; decisions.call_loop and call_repo are each decision's call's (set by a
-- trigger), so the stuck answers need no lookup of their calls.
CREATE OR REPLACE FUNCTION chalk_report_loop(kind text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT kind IN ('continue', 'retry', 'fix-review') $$;
-- A cost's histogram bucket: exact below $0.01, then by its first two significant digits (10% wide at most).
CREATE OR REPLACE FUNCTION chalk_report_bucket(cost numeric) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN u < 100 THEN greatest(u, 0)::int
    ELSE (100 + 90 * (length(u::text) - 3) + (u / (10::bigint ^ (length(u::text) - 2))::bigint) - 10)::int END
  FROM (SELECT round(cost * 10000)::bigint AS u) x $$;
CREATE INDEX IF NOT EXISTS runs_loop_cost_idx ON runs (chalk_report_bucket(cost_usd), cost_usd)
  WHERE kind IN ('continue', 'retry', 'fix-review');
CREATE TABLE IF NOT EXISTS report_calls (
  day date NOT NULL, every boolean NOT NULL, repo text NOT NULL, kind text NOT NULL, model text NOT NULL,
  prompts text NOT NULL, n bigint NOT NULL, cost numeric NOT NULL, seconds bigint NOT NULL, denials bigint NOT NULL,
  input_tokens numeric NOT NULL, output_tokens numeric NOT NULL, cache_read_tokens numeric NOT NULL,
  cache_write_tokens numeric NOT NULL, turns bigint NOT NULL, progressed bigint NOT NULL, np_cost numeric NOT NULL,
  with_denials bigint NOT NULL, failed bigint NOT NULL, failed_no_tests bigint NOT NULL, status_fail bigint NOT NULL,
  first_at timestamptz NOT NULL,
  PRIMARY KEY (every, repo, day, kind, model, prompts)
);
-- A loop's dimensions: agent status, verdict, CHALK_FP_RULES mode, tenth of its cap, near the cap, cost bucket.
CREATE TABLE IF NOT EXISTS report_loops (
  day date NOT NULL, every boolean NOT NULL, repo text NOT NULL, dim text NOT NULL, key text NOT NULL,
  n bigint NOT NULL, turns bigint NOT NULL, top numeric NOT NULL,
  PRIMARY KEY (every, repo, day, dim, key)
);
-- Each ticket's latest row: the window (created_at >= its start) holds a ticket when its latest row does.
CREATE TABLE IF NOT EXISTS report_tickets (
  repo text NOT NULL, ticket text NOT NULL, last_at timestamptz NOT NULL,
  PRIMARY KEY (repo, ticket)
);
CREATE INDEX IF NOT EXISTS report_tickets_last_idx ON report_tickets (last_at);
CREATE INDEX IF NOT EXISTS report_tickets_repo_last_idx ON report_tickets (repo, last_at);
-- Each failing or flaky test of a repository by a number, so a year of them groups by integers.
CREATE TABLE IF NOT EXISTS report_test_names (
  id serial PRIMARY KEY, repo text NOT NULL, flaky boolean NOT NULL, test text NOT NULL,
  UNIQUE (repo, flaky, test)
);
CREATE TABLE IF NOT EXISTS report_tests (
  day date NOT NULL, test_id integer NOT NULL, ticket text NOT NULL, n bigint NOT NULL,
  PRIMARY KEY (day, test_id, ticket)
);
CREATE INDEX IF NOT EXISTS report_tests_test_idx ON report_tests (test_id, day);
-- Version 12: each test's loops over every day (report_tests' n summed).
CREATE TABLE IF NOT EXISTS report_test_totals (test_id integer PRIMARY KEY, n bigint NOT NULL);
CREATE TABLE IF NOT EXISTS report_runs (
  repo text NOT NULL, run_id text NOT NULL,
  first_at timestamptz, last_at timestamptz, has_verdict boolean NOT NULL, any_stall boolean NOT NULL, mode text,
  judged boolean NOT NULL, blocker_only boolean NOT NULL, stop_verdict text, false_stop boolean NOT NULL,
  np_cost numeric NOT NULL, saved numeric NOT NULL, improving boolean NOT NULL,
  help_with integer NOT NULL, help_with_passed integer NOT NULL, help_without integer NOT NULL,
  help_without_passed integer NOT NULL, progress_loop integer, progress_at timestamptz, seen_at timestamptz NOT NULL,
  PRIMARY KEY (repo, run_id)
);
CREATE INDEX IF NOT EXISTS report_runs_seen_idx ON report_runs (seen_at);
CREATE INDEX IF NOT EXISTS report_runs_run_idx ON report_runs (run_id);
CREATE INDEX IF NOT EXISTS report_runs_first_idx ON report_runs (first_at);
CREATE INDEX IF NOT EXISTS report_runs_last_idx ON report_runs (last_at);
-- Each retry with the failure it retried (the run's previous loop's tests hash or first error).
CREATE TABLE IF NOT EXISTS report_retries (
  id bigint PRIMARY KEY, repo text NOT NULL, run_id text NOT NULL, prev_key text, given boolean NOT NULL,
  passed boolean NOT NULL
);
CREATE INDEX IF NOT EXISTS report_retries_run_idx ON report_retries (repo, run_id);
-- Version 12: the retries by the UTC day of their run's first loop, repository and retried failure (a key
-- whose retries all moved elsewhere stays, with zeros).
CREATE TABLE IF NOT EXISTS report_retry_keys (
  day date NOT NULL, repo text NOT NULL, prev_key text NOT NULL, given bigint NOT NULL, given_passed bigint NOT NULL,
  not_given bigint NOT NULL, not_given_passed bigint NOT NULL,
  PRIMARY KEY (day, repo, prev_key)
);
-- Version 12: the runs' facts by the UTC day of their first loop (every repository's and each one's), so a
-- long window's ledger reads days, not runs (a run opened a lesson or not is asked at read time).
CREATE TABLE IF NOT EXISTS report_run_days (
  day date NOT NULL, every boolean NOT NULL, repo text NOT NULL, mode text NOT NULL, has_verdict boolean NOT NULL,
  any_stall boolean NOT NULL, judged boolean NOT NULL, blocker_only boolean NOT NULL, stop_verdict text NOT NULL,
  false_stop boolean NOT NULL, improving boolean NOT NULL, runs bigint NOT NULL, np_cost numeric NOT NULL,
  saved numeric NOT NULL, help_with bigint NOT NULL, help_with_passed bigint NOT NULL, help_without bigint NOT NULL,
  help_without_passed bigint NOT NULL,
  PRIMARY KEY (every, repo, day, mode, has_verdict, any_stall, judged, blocker_only, stop_verdict, false_stop, improving)
);
-- Version 12: the runs by the UTC day of their latest row: for every repository a run id once, by its
-- latest row in any repository; for one, each of its runs.
CREATE TABLE IF NOT EXISTS report_run_seen (
  day date NOT NULL, every boolean NOT NULL, repo text NOT NULL, n bigint NOT NULL,
  PRIMARY KEY (every, repo, day)
);
-- Version 12: the runs rows not yet folded into the rollup, and the count of insert statements that
-- folds every 64th.
CREATE TABLE IF NOT EXISTS report_pending (id bigint NOT NULL);
CREATE SEQUENCE IF NOT EXISTS report_pending_tick;
-- Version 12: each decision's call's loop and repository, kept by triggers on decisions and runs.
ALTER TABLE decisions ADD COLUMN IF NOT EXISTS call_loop integer;
ALTER TABLE decisions ADD COLUMN IF NOT EXISTS call_repo text;
CREATE OR REPLACE FUNCTION chalk_decision_call() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  SELECT c.loop, c.repo INTO NEW.call_loop, NEW.call_repo FROM runs c WHERE c.id = NEW.call_id;
  IF NOT FOUND THEN
    NEW.call_loop := NULL;
    NEW.call_repo := NULL;
  END IF;
  RETURN NEW;
END $f$;
CREATE OR REPLACE TRIGGER decision_call BEFORE INSERT OR UPDATE OF call_id, call_loop, call_repo ON decisions
  FOR EACH ROW EXECUTE FUNCTION chalk_decision_call();
-- The pending rows themselves (the queries read them as they read the window's first partial day).
CREATE OR REPLACE FUNCTION chalk_report_pending() RETURNS SETOF runs LANGUAGE sql STABLE AS $$
  SELECT r.* FROM runs r WHERE r.id IN (SELECT id FROM report_pending) $$;
-- One runs row as the rollup counts it (n = 1): report_calls' and report_loops' measures.
CREATE OR REPLACE FUNCTION chalk_report_calls_of(r runs) RETURNS TABLE (
  day date, kind text, model text, prompts text, n bigint, cost numeric, seconds bigint, denials bigint,
  input_tokens numeric, output_tokens numeric, cache_read_tokens numeric, cache_write_tokens numeric, turns bigint,
  progressed bigint, np_cost numeric, with_denials bigint, failed bigint, failed_no_tests bigint, status_fail bigint,
  first_at timestamptz) LANGUAGE sql IMMUTABLE AS $$
  SELECT (r.created_at AT TIME ZONE 'UTC')::date, r.kind, r.model, r.prompts, 1::bigint, r.cost_usd::numeric,
    r.duration_s::bigint, r.denials::bigint, r.input_tokens::numeric, r.output_tokens::numeric,
    r.cache_read_tokens::numeric, r.cache_write_tokens::numeric, r.turns::bigint, r.progressed::int::bigint,
    CASE WHEN r.progressed THEN 0 ELSE r.cost_usd END::numeric, (r.denials > 0)::int::bigint,
    (r.rubric_exit <> 0)::int::bigint, (r.rubric_exit <> 0 AND r.failing_tests IS NULL)::int::bigint,
    (r.agent_status = 'fail')::int::bigint, r.created_at $$;
CREATE OR REPLACE FUNCTION chalk_report_loops_of(r runs) RETURNS TABLE (
  day date, dim text, key text, n bigint, turns bigint, top numeric) LANGUAGE sql IMMUTABLE AS $$
  SELECT (r.created_at AT TIME ZONE 'UTC')::date, v.dim, v.key, 1::bigint, r.turns::bigint, r.cost_usd::numeric
  FROM (VALUES ('agent', r.agent_status), ('verdict', COALESCE(r.verdict, 'none')), ('fp', COALESCE(r.fp_rules, 'unknown')),
    ('bucket', CASE WHEN r.budget_usd > 0 THEN LEAST(10, floor(10 * r.cost_usd / r.budget_usd))::int::text END),
    ('near', CASE WHEN r.budget_usd > 0 AND r.cost_usd >= 0.9 * r.budget_usd THEN '' END),
    ('cost', chalk_report_bucket(r.cost_usd)::text)) v(dim, key)
  WHERE chalk_report_loop(r.kind) AND v.key IS NOT NULL $$;
CREATE OR REPLACE FUNCTION chalk_report_tests_of(r runs) RETURNS TABLE (
  day date, flaky boolean, test text, n bigint) LANGUAGE sql IMMUTABLE AS $$
  SELECT (r.created_at AT TIME ZONE 'UTC')::date, f.flaky, t, count(*)
  FROM (VALUES (false, r.failing_tests), (true, r.flaky_tests)) f(flaky, list),
    unnest(string_to_array(f.list, E'\n')) t
  WHERE chalk_report_loop(r.kind) AND f.list IS NOT NULL AND t <> '' GROUP BY 1, 2, 3 $$;
-- Each retry among a run's loops created at or after `since`, with its previous loop's failure.
CREATE OR REPLACE FUNCTION chalk_report_retries_of(ids text[], since timestamptz) RETURNS SETOF report_retries
  LANGUAGE sql STABLE AS $$
  SELECT id, repo, run_id, prev_key, lessons > 0, progressed FROM (
    SELECT id, repo, run_id, kind, lessons, progressed,
      lag(COALESCE(tests_hash, first_error)) OVER (PARTITION BY repo, run_id ORDER BY loop, id) AS prev_key
    FROM (SELECT * FROM runs WHERE ids IS NULL AND run_id IS NOT NULL UNION ALL SELECT * FROM runs WHERE run_id IN (SELECT unnest(ids))) r
    WHERE created_at >= since AND chalk_report_loop(kind)) x
  WHERE kind = 'retry' $$;
-- Each run's facts from its rows created at or after `since` (-infinity: all of them), per repository.
-- The ledger's per-run rules are core/report/ledger.ts's runFacts, which a test holds this to.
CREATE OR REPLACE FUNCTION chalk_report_runs_of(ids text[], since timestamptz) RETURNS SETOF report_runs
  LANGUAGE sql STABLE AS $$
  WITH a AS (
    SELECT * FROM runs WHERE ids IS NULL AND run_id IS NOT NULL AND created_at >= since
    UNION ALL SELECT * FROM runs WHERE run_id IN (SELECT unnest(ids)) AND created_at >= since
  ), l AS (
    SELECT id, repo, run_id, loop, created_at, cost_usd, progressed, verdict, fp_rules,
      row_number() OVER (PARTITION BY repo, run_id ORDER BY loop, id) AS i,
      verdict IS NOT NULL AND verdict NOT IN ('blocked', 'agent_error') AS judged
    FROM a WHERE chalk_report_loop(kind)
  ), s AS (
    SELECT repo, run_id, min(i) FILTER (WHERE verdict IN ('deja_vu', 'repeat', 'no_change')) AS stop_at,
      max(i) FILTER (WHERE judged) AS last_judged
    FROM l GROUP BY 1, 2
  ), f AS (
    SELECT l.repo, l.run_id, min(l.created_at) AS first_at, max(l.created_at) AS last_at,
      bool_or(l.verdict IS NOT NULL) AS has_verdict, bool_or(NOT l.progressed) AS any_stall,
      (array_agg(l.fp_rules ORDER BY l.loop DESC, l.id DESC))[1] AS mode,
      bool_or(l.judged) AS judged, max(s.stop_at) AS stop_at,
      (array_agg(l.verdict ORDER BY l.i) FILTER (WHERE l.i = s.stop_at))[1] AS stop_verdict,
      COALESCE(bool_or(l.progressed) FILTER (WHERE l.i > s.stop_at), false) AS false_stop,
      COALESCE(sum(l.cost_usd) FILTER (WHERE NOT l.progressed), 0) AS np_cost,
      COALESCE(sum(l.cost_usd) FILTER (WHERE l.i > s.stop_at), 0) AS saved,
      COALESCE(bool_or(l.verdict = 'improving') FILTER (WHERE l.i = s.last_judged), false) AS improving
    FROM l JOIN s USING (repo, run_id) GROUP BY 1, 2
  ), h AS (
    SELECT repo, run_id, count(*) FILTER (WHERE given)::int AS w, count(*) FILTER (WHERE given AND passed)::int AS wp,
      count(*) FILTER (WHERE NOT given)::int AS wo, count(*) FILTER (WHERE NOT given AND passed)::int AS wop
    FROM chalk_report_retries_of(ids, since) GROUP BY 1, 2
  ), p AS (
    SELECT repo, run_id, max(loop) FILTER (WHERE progressed) AS progress_loop,
      max(created_at) FILTER (WHERE progressed) AS progress_at, max(created_at) AS seen_at
    FROM a GROUP BY 1, 2
  )
  SELECT p.repo, p.run_id, f.first_at, f.last_at, COALESCE(f.has_verdict, false), COALESCE(f.any_stall, false), f.mode,
    COALESCE(f.judged, false), COALESCE(NOT f.judged AND f.has_verdict, false), f.stop_verdict,
    COALESCE(f.false_stop, false), COALESCE(f.np_cost, 0), COALESCE(f.saved, 0), COALESCE(f.improving, false),
    COALESCE(h.w, 0), COALESCE(h.wp, 0), COALESCE(h.wo, 0), COALESCE(h.wop, 0), p.progress_loop, p.progress_at, p.seen_at
  FROM p LEFT JOIN f USING (repo, run_id) LEFT JOIN h USING (repo, run_id) $$;
-- Adds (sign 1) or takes away (-1) the runs' stored retries (ids NULL: every run's) to or from report_retry_keys.
CREATE OR REPLACE FUNCTION chalk_report_keys_add(sign integer, ids text[]) RETURNS void LANGUAGE sql AS $f$
  INSERT INTO report_retry_keys AS k
  SELECT (p.first_at AT TIME ZONE 'UTC')::date, t.repo, t.prev_key, sign * count(*) FILTER (WHERE t.given),
    sign * count(*) FILTER (WHERE t.given AND t.passed), sign * count(*) FILTER (WHERE NOT t.given),
    sign * count(*) FILTER (WHERE NOT t.given AND t.passed)
  FROM report_retries t JOIN report_runs p USING (repo, run_id)
  WHERE t.prev_key IS NOT NULL AND (ids IS NULL OR t.run_id IN (SELECT unnest(ids)))
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (day, repo, prev_key) DO UPDATE SET given = k.given + EXCLUDED.given,
    given_passed = k.given_passed + EXCLUDED.given_passed, not_given = k.not_given + EXCLUDED.not_given,
    not_given_passed = k.not_given_passed + EXCLUDED.not_given_passed $f$;
-- Adds (sign 1) or takes away (-1) the runs' stored facts (ids NULL: every run's) to or from report_run_days
-- and report_run_seen.
CREATE OR REPLACE FUNCTION chalk_report_run_days_add(sign integer, ids text[]) RETURNS void LANGUAGE sql AS $f$
  INSERT INTO report_run_days AS k
  SELECT (p.first_at AT TIME ZONE 'UTC')::date, e.every, CASE WHEN e.every THEN '' ELSE p.repo END,
    COALESCE(p.mode, 'unknown'), p.has_verdict, p.any_stall, p.judged, p.blocker_only, COALESCE(p.stop_verdict, ''),
    p.false_stop, p.improving, sign * count(*), sign * sum(p.np_cost), sign * sum(p.saved), sign * sum(p.help_with),
    sign * sum(p.help_with_passed), sign * sum(p.help_without), sign * sum(p.help_without_passed)
  FROM report_runs p CROSS JOIN (VALUES (true), (false)) e(every)
  WHERE p.first_at IS NOT NULL AND (ids IS NULL OR p.run_id IN (SELECT unnest(ids)))
  GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 ORDER BY 2, 3, 1, 4, 5, 6, 7, 8, 9, 10, 11
  ON CONFLICT (every, repo, day, mode, has_verdict, any_stall, judged, blocker_only, stop_verdict, false_stop, improving)
  DO UPDATE SET runs = k.runs + EXCLUDED.runs, np_cost = k.np_cost + EXCLUDED.np_cost, saved = k.saved + EXCLUDED.saved,
    help_with = k.help_with + EXCLUDED.help_with, help_with_passed = k.help_with_passed + EXCLUDED.help_with_passed,
    help_without = k.help_without + EXCLUDED.help_without,
    help_without_passed = k.help_without_passed + EXCLUDED.help_without_passed;
  INSERT INTO report_run_seen AS k
  SELECT day, every, repo, sign * count(*) FROM (
    SELECT (max(p.seen_at) AT TIME ZONE 'UTC')::date AS day, true AS every, '' AS repo
    FROM report_runs p WHERE ids IS NULL OR p.run_id IN (SELECT unnest(ids)) GROUP BY p.run_id
    UNION ALL SELECT (p.seen_at AT TIME ZONE 'UTC')::date, false, p.repo
    FROM report_runs p WHERE ids IS NULL OR p.run_id IN (SELECT unnest(ids))) x
  GROUP BY 1, 2, 3 ORDER BY 2, 3, 1
  ON CONFLICT (every, repo, day) DO UPDATE SET n = k.n + EXCLUDED.n $f$;
-- The runs' facts and retries made again from their rows (ids NULL: every run), under the rollup's lock.
CREATE OR REPLACE FUNCTION chalk_report_runs_redo(ids text[]) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  IF ids IS NULL THEN
    TRUNCATE report_runs, report_retries, report_retry_keys, report_run_days, report_run_seen;
  ELSE
    PERFORM chalk_report_keys_add(-1, ids), chalk_report_run_days_add(-1, ids);
    DELETE FROM report_runs WHERE run_id IN (SELECT unnest(ids));
    DELETE FROM report_retries WHERE run_id IN (SELECT unnest(ids));
  END IF;
  INSERT INTO report_runs SELECT * FROM chalk_report_runs_of(ids, '-infinity');
  INSERT INTO report_retries SELECT * FROM chalk_report_retries_of(ids, '-infinity');
  PERFORM chalk_report_keys_add(1, ids), chalk_report_run_days_add(1, ids);
END $f$;
-- The statements that add rows' counts and sums to the daily tables, upserting in key order (concurrent
-- writers commute): `src` names a relation of runs rows or a query of runs in parentheses, which may read
-- an array of runs ids as $1.
CREATE OR REPLACE FUNCTION chalk_report_add_sql(src text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $f$
  SELECT ARRAY[format($q$
    INSERT INTO report_calls AS t
    SELECT c.day, s.every, CASE WHEN s.every THEN '' ELSE a.repo END, c.kind, c.model, c.prompts, sum(c.n), sum(c.cost),
      sum(c.seconds), sum(c.denials), sum(c.input_tokens), sum(c.output_tokens), sum(c.cache_read_tokens),
      sum(c.cache_write_tokens), sum(c.turns), sum(c.progressed), sum(c.np_cost), sum(c.with_denials), sum(c.failed),
      sum(c.failed_no_tests), sum(c.status_fail), min(c.first_at)
    FROM %s a CROSS JOIN LATERAL chalk_report_calls_of(a::runs) c CROSS JOIN (VALUES (true), (false)) s(every)
    GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 2, 3, 1, 4, 5, 6
    ON CONFLICT (every, repo, day, kind, model, prompts) DO UPDATE SET n = t.n + EXCLUDED.n, cost = t.cost + EXCLUDED.cost,
      seconds = t.seconds + EXCLUDED.seconds, denials = t.denials + EXCLUDED.denials,
      input_tokens = t.input_tokens + EXCLUDED.input_tokens, output_tokens = t.output_tokens + EXCLUDED.output_tokens,
      cache_read_tokens = t.cache_read_tokens + EXCLUDED.cache_read_tokens,
      cache_write_tokens = t.cache_write_tokens + EXCLUDED.cache_write_tokens, turns = t.turns + EXCLUDED.turns,
      progressed = t.progressed + EXCLUDED.progressed, np_cost = t.np_cost + EXCLUDED.np_cost,
      with_denials = t.with_denials + EXCLUDED.with_denials, failed = t.failed + EXCLUDED.failed,
      failed_no_tests = t.failed_no_tests + EXCLUDED.failed_no_tests, status_fail = t.status_fail + EXCLUDED.status_fail,
      first_at = LEAST(t.first_at, EXCLUDED.first_at)$q$, src), format($q$
    INSERT INTO report_loops AS t
    SELECT c.day, s.every, CASE WHEN s.every THEN '' ELSE a.repo END, c.dim, c.key, sum(c.n), sum(c.turns), max(c.top)
    FROM %s a CROSS JOIN LATERAL chalk_report_loops_of(a::runs) c CROSS JOIN (VALUES (true), (false)) s(every)
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 2, 3, 1, 4, 5
    ON CONFLICT (every, repo, day, dim, key) DO UPDATE SET n = t.n + EXCLUDED.n, turns = t.turns + EXCLUDED.turns,
      top = GREATEST(t.top, EXCLUDED.top)$q$, src), format($q$
    INSERT INTO report_tickets AS t
    SELECT a.repo, a.ticket, max(a.created_at) FROM %s a GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (repo, ticket) DO UPDATE SET last_at = GREATEST(t.last_at, EXCLUDED.last_at)$q$, src), format($q$
    INSERT INTO report_test_names (repo, flaky, test)
    SELECT DISTINCT a.repo, c.flaky, c.test FROM %s a CROSS JOIN LATERAL chalk_report_tests_of(a::runs) c ORDER BY 1, 2, 3
    ON CONFLICT (repo, flaky, test) DO NOTHING$q$, src), format($q$
    INSERT INTO report_tests AS t
    SELECT c.day, k.id, a.ticket, sum(c.n)
    FROM %s a CROSS JOIN LATERAL chalk_report_tests_of(a::runs) c
      JOIN report_test_names k ON k.repo = a.repo AND k.flaky = c.flaky AND k.test = c.test
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (day, test_id, ticket) DO UPDATE SET n = t.n + EXCLUDED.n$q$, src), format($q$
    INSERT INTO report_test_totals AS t
    SELECT k.id, sum(c.n)
    FROM %s a CROSS JOIN LATERAL chalk_report_tests_of(a::runs) c
      JOIN report_test_names k ON k.repo = a.repo AND k.flaky = c.flaky AND k.test = c.test
    GROUP BY 1 ORDER BY 1
    ON CONFLICT (test_id) DO UPDATE SET n = t.n + EXCLUDED.n$q$, src)]
$f$;
DROP FUNCTION IF EXISTS chalk_report_add(text);
CREATE OR REPLACE FUNCTION chalk_report_add(src text, ids bigint[]) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
  q text;
BEGIN
  FOREACH q IN ARRAY chalk_report_add_sql(src) LOOP
    EXECUTE q USING ids;
  END LOOP;
END $f$;
-- Folds every pending row visible here into the rollup: their sums added, their runs' facts made again.
-- Rows another transaction has not committed yet stay pending for a later fold.
CREATE OR REPLACE FUNCTION chalk_report_fold() RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
  ids bigint[];
BEGIN
  PERFORM pg_advisory_xact_lock(7242010);
  WITH d AS (DELETE FROM report_pending RETURNING id) SELECT array_agg(id) INTO ids FROM d;
  IF ids IS NULL THEN
    RETURN;
  END IF;
  PERFORM chalk_report_add('(SELECT r.* FROM runs r WHERE r.id IN (SELECT unnest($1::bigint[])))', ids);
  PERFORM chalk_report_runs_redo(array_agg(DISTINCT run_id))
  FROM runs WHERE id IN (SELECT unnest(ids)) AND run_id IS NOT NULL HAVING count(*) > 0;
END $f$;
-- The daily tables' rows of these days made again from runs (the caller holds the lock and has folded).
-- Rows still pending are left to their fold: an insert that committed after the caller's fold has its
-- rows in runs and in report_pending both (inserts take no lock).
CREATE OR REPLACE FUNCTION chalk_report_days_redo(days date[]) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  UPDATE report_test_totals t SET n = t.n - x.n
  FROM (SELECT test_id, sum(n) AS n FROM report_tests WHERE day = ANY (days) GROUP BY 1) x WHERE t.test_id = x.test_id;
  DELETE FROM report_calls WHERE day = ANY (days);
  DELETE FROM report_loops WHERE day = ANY (days);
  DELETE FROM report_tests WHERE day = ANY (days);
  PERFORM chalk_report_add(format('(SELECT r.* FROM runs r, unnest(%L::date[]) d
    WHERE r.created_at >= d::timestamp AT TIME ZONE ''UTC'' AND r.created_at < (d + 1)::timestamp AT TIME ZONE ''UTC''
      AND r.id NOT IN (SELECT id FROM report_pending))', days),
    NULL);
END $f$;
-- An insert lists its rows; every 64th insert statement (or one of 64 rows or more) folds, unless its
-- transaction reads one snapshot (a fold there could meet rows another fold took meanwhile).
CREATE OR REPLACE FUNCTION chalk_report_insert() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  INSERT INTO report_pending (id) SELECT id FROM added;
  IF (nextval('report_pending_tick') % 64 = 0 OR EXISTS (SELECT 1 FROM added OFFSET 63))
     AND current_setting('transaction_isolation') = 'read committed' THEN
    PERFORM chalk_report_fold();
  END IF;
  RETURN NULL;
END $f$;
CREATE OR REPLACE FUNCTION chalk_report_change() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  -- Under the lock, with nothing pending: the days and runs made again hold every row.
  PERFORM chalk_report_fold();
  IF TG_OP = 'UPDATE' THEN
    PERFORM chalk_report_days_redo(array_agg(DISTINCT d)), chalk_report_runs_redo(array_agg(DISTINCT r) FILTER (WHERE r IS NOT NULL))
    FROM (SELECT (created_at AT TIME ZONE 'UTC')::date AS d, run_id AS r FROM removed
          UNION SELECT (created_at AT TIME ZONE 'UTC')::date, run_id FROM added) x HAVING count(*) > 0;
    -- A decision's call's loop and repository (chalk_decision_call looks them up again).
    UPDATE decisions d SET call_id = d.call_id FROM added a
    WHERE d.call_id = a.id AND (d.call_loop IS DISTINCT FROM a.loop OR d.call_repo IS DISTINCT FROM a.repo);
  ELSE
    PERFORM chalk_report_days_redo(array_agg(DISTINCT (created_at AT TIME ZONE 'UTC')::date)),
      chalk_report_runs_redo(array_agg(DISTINCT run_id) FILTER (WHERE run_id IS NOT NULL))
    FROM removed HAVING count(*) > 0;
  END IF;
  -- A ticket's latest row may now be an earlier one, or another's (an update may move a row).
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM report_tickets t USING (SELECT repo, ticket FROM removed UNION SELECT repo, ticket FROM added) x
    WHERE t.repo = x.repo AND t.ticket = x.ticket;
    INSERT INTO report_tickets
    SELECT r.repo, r.ticket, max(r.created_at)
    FROM runs r JOIN (SELECT repo, ticket FROM removed UNION SELECT repo, ticket FROM added) x
      ON r.repo = x.repo AND r.ticket = x.ticket GROUP BY 1, 2 ORDER BY 1, 2;
  ELSE
    DELETE FROM report_tickets t USING (SELECT DISTINCT repo, ticket FROM removed) x
    WHERE t.repo = x.repo AND t.ticket = x.ticket;
    INSERT INTO report_tickets
    SELECT r.repo, r.ticket, max(r.created_at) FROM runs r JOIN (SELECT DISTINCT repo, ticket FROM removed) x
      ON r.repo = x.repo AND r.ticket = x.ticket GROUP BY 1, 2 ORDER BY 1, 2;
  END IF;
  RETURN NULL;
END $f$;
CREATE OR REPLACE FUNCTION chalk_report_truncate() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  TRUNCATE report_calls, report_loops, report_tickets, report_tests, report_test_totals, report_test_names, report_runs,
    report_retries, report_retry_keys, report_run_days, report_run_seen, report_pending;
  RETURN NULL;
END $f$;
CREATE OR REPLACE TRIGGER report_insert AFTER INSERT ON runs
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chalk_report_insert();
CREATE OR REPLACE TRIGGER report_update AFTER UPDATE ON runs
  REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chalk_report_change();
CREATE OR REPLACE TRIGGER report_delete AFTER DELETE ON runs
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION chalk_report_change();
CREATE OR REPLACE TRIGGER report_truncate AFTER TRUNCATE ON runs
  FOR EACH STATEMENT EXECUTE FUNCTION chalk_report_truncate();
DO $$ BEGIN
  -- Rows written before version 11 (a database that has its rollup already, or rows pending, is left as
  -- it is): every row folded in at once.
  IF NOT EXISTS (SELECT 1 FROM report_calls) AND NOT EXISTS (SELECT 1 FROM report_pending)
     AND EXISTS (SELECT 1 FROM runs) THEN
    INSERT INTO report_pending (id) SELECT id FROM runs;
    PERFORM chalk_report_fold();
  END IF;
  -- A rollup written by version 11: version 12's totals and keys made from it, and the decisions' calls.
  IF NOT EXISTS (SELECT 1 FROM report_test_totals) THEN
    INSERT INTO report_test_totals SELECT test_id, sum(n) FROM report_tests GROUP BY 1;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM report_retry_keys) THEN
    PERFORM chalk_report_keys_add(1, NULL);
  END IF;
  IF NOT EXISTS (SELECT 1 FROM report_run_seen) THEN
    PERFORM chalk_report_run_days_add(1, NULL);
  END IF;
  UPDATE decisions d SET call_id = d.call_id FROM runs c
  WHERE c.id = d.call_id AND (d.call_loop IS DISTINCT FROM c.loop OR d.call_repo IS DISTINCT FROM c.repo);
END $$;
-- End of the report card's rollup (versions 11 and 12).
