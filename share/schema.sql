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

-- Version 6: similarity recall (failure and text mode) finds its best lessons by nearest-neighbour
-- order on a GiST trigram index (`col <-> query`, distance = 1 - similarity; core/store/lessons.ts
-- says why and how ties stay exact). A GiST leaf holds the text's whole trigram array, and an index
-- row has at most 8,191 bytes, so only texts with at most chalk_knn_trgms() distinct trigrams (3
-- bytes each) are in it; the longer ones, rare, have a partial GIN index of their own.
-- chalk_knn_trgms() is the one copy of that bound (the recall statements call it).
CREATE OR REPLACE FUNCTION chalk_knn_trgms() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 2000 $$;
DO $$
DECLARE
  cap integer := chalk_knn_trgms();
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'lessons'::regclass AND attname = 'signature_trgms' AND NOT attisdropped) THEN
      EXECUTE 'ALTER TABLE lessons ADD COLUMN signature_trgms integer GENERATED ALWAYS AS
        (coalesce(array_length(show_trgm(signature), 1), 0)) STORED';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'lessons'::regclass AND attname = 'first_error_trgms' AND NOT attisdropped) THEN
      EXECUTE 'ALTER TABLE lessons ADD COLUMN first_error_trgms integer GENERATED ALWAYS AS
        (coalesce(array_length(show_trgm(first_error), 1), 0)) STORED';
    END IF;
    EXECUTE format(
      'CREATE INDEX IF NOT EXISTS lessons_signature_knn ON lessons USING gist (signature gist_trgm_ops(siglen = 256))
       WHERE signature_trgms <= %s AND resolved_at IS NOT NULL AND forgotten_at IS NULL', cap);
    EXECUTE format(
      'CREATE INDEX IF NOT EXISTS lessons_first_error_knn ON lessons USING gist (first_error gist_trgm_ops(siglen = 256))
       WHERE first_error IS NOT NULL AND first_error_trgms <= %s AND resolved_at IS NOT NULL AND forgotten_at IS NULL', cap);
    EXECUTE format(
      'CREATE INDEX IF NOT EXISTS lessons_signature_long ON lessons USING gin (signature gin_trgm_ops)
       WHERE signature_trgms > %s AND resolved_at IS NOT NULL AND forgotten_at IS NULL', cap);
    EXECUTE format(
      'CREATE INDEX IF NOT EXISTS lessons_first_error_long ON lessons USING gin (first_error gin_trgm_ops)
       WHERE first_error IS NOT NULL AND first_error_trgms > %s AND resolved_at IS NOT NULL AND forgotten_at IS NULL', cap);
  END IF;
END $$;

-- Version 7: spec-mode recall's candidates. word_similarity(text, spec) is the share of the text's
-- distinct trigrams found in the best extent of the spec, so a text scores above 0.6 only if more
-- than 0.6 of its trigrams are among the spec's (core/store/lessons.ts). lesson_trgms holds each
-- lesson's distinct trigrams of coalesce(first_error, signature) with their count `of`, kept by a
-- trigger from the text columns, so one index search by the spec's trigrams counts, per lesson, the
-- trigrams it shares, and only lessons that can pass are scored.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    CREATE TABLE IF NOT EXISTS lesson_trgms (
      trgm text NOT NULL,
      lesson_id bigint NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
      "of" integer NOT NULL,
      PRIMARY KEY (trgm, lesson_id)
    );
    CREATE INDEX IF NOT EXISTS lesson_trgms_lesson_idx ON lesson_trgms (lesson_id);
    CREATE OR REPLACE FUNCTION chalk_lesson_trgms() RETURNS trigger LANGUAGE plpgsql AS $f$
    DECLARE
      ts text[] := show_trgm(coalesce(NEW.first_error, NEW.signature));
    BEGIN
      IF TG_OP = 'UPDATE' THEN
        DELETE FROM lesson_trgms WHERE lesson_id = NEW.id;
      END IF;
      INSERT INTO lesson_trgms (trgm, lesson_id, "of")
        SELECT t, NEW.id, coalesce(array_length(ts, 1), 0) FROM unnest(ts) AS t;
      RETURN NULL;
    END $f$;
    CREATE OR REPLACE TRIGGER lesson_trgms_insert AFTER INSERT ON lessons
      FOR EACH ROW EXECUTE FUNCTION chalk_lesson_trgms();
    CREATE OR REPLACE TRIGGER lesson_trgms_update AFTER UPDATE OF signature, first_error ON lessons
      FOR EACH ROW WHEN (OLD.signature IS DISTINCT FROM NEW.signature OR OLD.first_error IS DISTINCT FROM NEW.first_error)
      EXECUTE FUNCTION chalk_lesson_trgms();
    -- Version 5's way (a generated trigram count, a partial GIN index per band of it, and the list
    -- of bands), which this replaces; they hold nothing lesson_trgms does not.
    DROP INDEX IF EXISTS lessons_spec_trgm_1, lessons_spec_trgm_8, lessons_spec_trgm_16,
      lessons_spec_trgm_32, lessons_spec_trgm_64, lessons_spec_trgm_128, lessons_spec_trgm_256,
      lessons_spec_trgm_512;
    ALTER TABLE lessons DROP COLUMN IF EXISTS recall_trgms;
    DROP FUNCTION IF EXISTS chalk_spec_bands();
    -- Lessons written before version 7.
    INSERT INTO lesson_trgms (trgm, lesson_id, "of")
      SELECT t, l.id, coalesce(array_length(show_trgm(coalesce(l.first_error, l.signature)), 1), 0)
      FROM lessons l, unnest(show_trgm(coalesce(l.first_error, l.signature))) AS t
      WHERE NOT EXISTS (SELECT 1 FROM lesson_trgms x WHERE x.lesson_id = l.id);
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
