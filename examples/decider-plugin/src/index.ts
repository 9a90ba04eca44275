import { DECIDE_PATH, decodeResponse, encodeRequest, failureForStatus, untrustedReason } from 'chalk-harness/decider';
import {
  type AdmissionLimit,
  type DecideOptions,
  type Decider,
  type DeciderEntry,
  DecisionFailure,
  type DecisionReply,
  type DecisionRequest,
  type HealthReport,
  httpUrl,
  machineKey,
  type Plugin,
} from 'chalk-harness/plugin';

/**
 * An example third-party decider, compiled against chalk-harness's published declarations
 * only (`chalk-harness/plugin` for the port and its types, `chalk-harness/decider` for the
 * protocol's codec and trust rule):
 * - a decider named `example`, chosen with CHALK_DECIDER_PROVIDER=example, that speaks decider
 *   protocol v1 to CHALK_EXAMPLE_DECIDER_URL with the platform's fetch, one question at a time
 *   (its admission limit), every failure a DecisionFailure of a FailureKind;
 * - that key (machine-scoped: a repository's .chalk/config cannot point it elsewhere);
 * - an `onVerdict` tap that says, once per verdict, what the loop's verdict was.
 */

export const DECIDER_NAME = 'example';
const KEY = 'CHALK_EXAMPLE_DECIDER_URL';
const LIMIT: AdmissionLimit = { kind: 'concurrency', maxConcurrent: 1 };

export class ExampleDecider implements Decider {
  readonly name = DECIDER_NAME;
  readonly entry: DeciderEntry;

  constructor(private readonly url: string) {
    this.entry = { id: 'example', url, maxContextTokens: 4096, limit: LIMIT };
  }

  unavailable(): string | null {
    return untrustedReason(this.url, KEY);
  }

  async decide(request: DecisionRequest, opts: DecideOptions): Promise<DecisionReply> {
    const refused = this.unavailable();
    if (refused) return { ok: false, failure: new DecisionFailure('untrusted', refused, { retryable: false }) };
    const left = (opts.deadline ?? Date.now() + 5_000) - Date.now();
    if (left <= 0) return { ok: false, failure: new DecisionFailure('budget', 'no time left', { retryable: false }) };
    const signals = [AbortSignal.timeout(left), ...(opts.signal ? [opts.signal] : [])];
    let res: Response;
    try {
      res = await fetch(new URL(DECIDE_PATH, this.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: encodeRequest(request),
        signal: AbortSignal.any(signals),
      });
    } catch (err) {
      if (opts.signal?.aborted) return { ok: false, failure: new DecisionFailure('cancelled', 'cancelled') };
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      return {
        ok: false,
        failure: timedOut
          ? new DecisionFailure('timeout', 'no answer in time', { retryable: false })
          : new DecisionFailure('unreachable', 'could not be reached'),
      };
    }
    const body = await res.text();
    if (res.status !== 200) return { ok: false, failure: failureForStatus(res.status) };
    try {
      return { ok: true, response: decodeResponse(body, request) };
    } catch (err) {
      const failure = err instanceof DecisionFailure ? err : new DecisionFailure('invalid', 'not an answer');
      return { ok: false, failure };
    }
  }

  async health(): Promise<HealthReport> {
    const refused = this.unavailable();
    if (refused) return { healthy: false, status: 'untrusted', via: 'none', detail: refused };
    try {
      const res = await fetch(new URL('/health', this.url), { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      return res.status === 200
        ? { healthy: true, status: 'ok', via: 'health' }
        : { healthy: false, status: `HTTP ${res.status}`, via: 'health' };
    } catch {
      return { healthy: false, status: 'unreachable', via: 'health' };
    }
  }
}

const plugin: Plugin = {
  name: 'decider-example',
  configuration: [
    machineKey(KEY, 'http://127.0.0.1:8472', 'The example decider (CHALK_DECIDER_PROVIDER=example)', httpUrl(KEY)),
  ],
  register(host) {
    // Offered by name; it declares no `auto`, so only CHALK_DECIDER_PROVIDER=example binds it.
    host.offer('Decider', DECIDER_NAME, { useFactory: () => new ExampleDecider(host.config.str(KEY)) });
    host.hooks.onVerdict.tapPromise('decider-example', async (ev) => {
      host.log.info(`decider-example: loop ${ev.loop} verdict ${ev.verdict}`);
      return undefined;
    });
  },
};

export default plugin;
