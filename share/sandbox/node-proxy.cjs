// Preloaded into every Node process of the sandbox (NODE_OPTIONS --require): Node's own
// fetch ignores HTTP(S)_PROXY before Node 24 (22.21 and later read it with NODE_USE_ENV_PROXY,
// which the image sets too). Where Node does not, undici's EnvHttpProxyAgent becomes the global
// dispatcher, so fetch goes through the sandbox's egress proxy and honours NO_PROXY. Without a
// proxy in the environment it does nothing; a failure here never stops the program.
'use strict';
const env = process.env;
const proxied = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy;
const [major, minor] = process.versions.node.split('.').map(Number);
const builtIn = major > 22 || (major === 22 && minor >= 21);
if (proxied && !builtIn && typeof globalThis.fetch === 'function') {
  try {
    const { setGlobalDispatcher, EnvHttpProxyAgent } = require('/usr/local/lib/chalk/node_modules/undici');
    // Its constructor warns that it is experimental: on every program's stderr, so not here.
    const warn = process.emitWarning;
    process.emitWarning = () => {};
    try {
      // http:// as a proxy request, not a tunnel: the proxy carries only TLS through CONNECT.
      setGlobalDispatcher(new EnvHttpProxyAgent({ proxyTunnel: false }));
    } finally {
      process.emitWarning = warn;
    }
  } catch {
    // Node's fetch then goes direct, which the sandbox's network refuses: the caller sees that.
  }
}
