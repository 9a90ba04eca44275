import 'reflect-metadata';
import { afterAll } from 'vitest';
import { stopTempDaemons } from './helpers/cli.js';

// No embedded database server a test's `chalk` started outlives its file.
afterAll(stopTempDaemons, 60_000);
