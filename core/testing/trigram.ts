/** pg_trgm's similarity and word_similarity in JavaScript (core/store/trigram.ts), for the MemoryStore and tests. */
export { similarity, trigramList, trigrams, wordSimilarity } from '../store/trigram.js';
