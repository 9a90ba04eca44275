/** The scripted model ships in the build (demo/) for `chalk demo`; the tests use that one copy. */
export * from '../../demo/model-protocol.js';
