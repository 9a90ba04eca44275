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
