import { config } from 'zod';

/*
 * Imported first by cli/light.ts, before any schema is made: zod's object schemas then parse
 * with its interpreter instead of generating a parser with `new Function` the first time each
 * is used. For a command that parses a few records and exits, generating and compiling those
 * parsers was the larger part of zod's time, and code made by `new Function` is never in the
 * bundle's code cache. What a parse accepts, returns and reports is the same either way.
 */
config({ jitless: true });
