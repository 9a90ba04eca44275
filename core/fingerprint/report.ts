import { EntityDecoder, XML } from '@nodable/entities';
import { XMLParser } from 'fast-xml-parser';
import { looksLikeTap, tapFailingTests } from './tap.js';

/**
 * Failing test IDs from a test report (`CHALK_TEST_REPORT`). The format is
 * told by the content, never by the file name:
 * - first non-space character (after a byte-order mark) is `<`: XML, told by
 *   its root element: `<assemblies>`/`<assembly>` is xUnit.net's v2 XML,
 *   `<TestRun>` is Visual Studio's trx, anything else JUnit XML (which mocha's
 *   `xunit` reporter also writes);
 * - exactly one JSON object with a `testResults` key: `jest --json` (and
 *   vitest's `--reporter=json`, which writes the same format);
 * - exactly one JSON object with `stats` and a `failures` list: mocha's
 *   `--reporter json`;
 * - a `TAP version` line or an `ok`/`not ok` test point: a TAP stream;
 * - anything else: `go test -json`, one event per line.
 */
export type ReportFormat = 'junit' | 'xunit' | 'trx' | 'jest' | 'mocha' | 'tap' | 'go';

/** Where the repository is checked out in the sandbox; jest names files by absolute path. */
export const SANDBOX_REPO = '/work/repo';

/**
 * The name of an XML document's root element, past the prolog, comments and
 * a DOCTYPE (read with indexOf: a regular expression for this backtracks
 * exponentially on a hostile prolog).
 */
function xmlRoot(body: string): string {
  let i = 0;
  const skipTo = (end: string, from: number) => {
    const at = body.indexOf(end, from);
    return at < 0 ? -1 : at + end.length;
  };
  while (i >= 0) {
    while (i < body.length && /\s/.test(body[i] as string)) i++;
    if (body.startsWith('<?', i)) i = skipTo('?>', i + 2);
    else if (body.startsWith('<!--', i)) i = skipTo('-->', i + 4);
    else if (body.startsWith('<!DOCTYPE', i)) {
      const bracket = body.indexOf('[', i);
      const gt = body.indexOf('>', i);
      if (bracket < 0 || bracket > gt) i = gt < 0 ? -1 : gt + 1;
      else {
        const close = skipTo(']', bracket);
        i = close < 0 ? -1 : skipTo('>', close);
      }
    } else break;
  }
  return i < 0 ? '' : (/^<([A-Za-z_][\w:.-]*)/.exec(body.slice(i, i + 200))?.[1] ?? '');
}

export function reportFormat(content: string): ReportFormat {
  const body = content.replace(/^\uFEFF/, '');
  if (/^\s*</.test(body)) {
    const root = xmlRoot(body);
    if (root === 'assemblies' || root === 'assembly') return 'xunit';
    if (root === 'TestRun') return 'trx';
    return 'junit';
  }
  const parsed = parseJson(body);
  if (isObject(parsed) && 'testResults' in parsed) return 'jest';
  if (isObject(parsed) && isObject(parsed.stats) && Array.isArray(parsed.failures)) return 'mocha';
  if (looksLikeTap(body)) return 'tap';
  return 'go';
}

/**
 * The failing test IDs a report names, unsorted, or null when the report
 * cannot be read (which the fingerprint counts as UNKNOWN, never as zero).
 */
export function testsFromReport(content: string, repoDir = SANDBOX_REPO): string[] | null {
  const body = content.replace(/^\uFEFF/, '');
  switch (reportFormat(body)) {
    case 'junit':
      return junitTests(body);
    case 'xunit':
      return xmlTests(body, xunitCase);
    case 'trx':
      return xmlTests(body, trxCase);
    case 'jest':
      return jestTests(parseJson(body), repoDir);
    case 'mocha':
      return mochaTests(parseJson(body), repoDir);
    case 'tap':
      return tapFailingTests(body).map(oneLine);
    case 'go':
      return goTests(body);
  }
}

/** IDs are one per line wherever they are stored, so a line break inside one becomes a space. */
const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// --- JUnit XML -------------------------------------------------------------

type XmlNode = Record<string, unknown>;

function xmlParser(): XMLParser {
  return new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    // Every element is a list, so one or many testcases read the same way.
    isArray: (_name, _path, _leaf, isAttribute) => !isAttribute,
    parseAttributeValue: false,
    parseTagValue: false,
    // XML's own entities and numeric references; entities a DOCTYPE declares are never expanded.
    entityDecoder: new EntityDecoder({ namedEntities: XML, onInputEntity: () => 'block' }),
  });
}

/** Each `<testcase>` with a `<failure>` or `<error>` child: `classname::name`, or `name` alone. */
function junitTests(xml: string): string[] | null {
  let root: unknown;
  try {
    root = xmlParser().parse(xml);
  } catch {
    return null;
  }
  const ids: string[] = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (!isObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('@_') || key === '#text') continue;
      if (key === 'testcase' && Array.isArray(value)) {
        for (const tc of value) if (isObject(tc)) collectCase(tc, ids);
      }
      visit(value);
    }
  };
  visit(root);
  return ids;
}

function collectCase(tc: XmlNode, ids: string[]) {
  if (!('failure' in tc) && !('error' in tc)) return;
  const name = typeof tc['@_name'] === 'string' ? tc['@_name'] : '';
  const cls = typeof tc['@_classname'] === 'string' ? tc['@_classname'] : '';
  const id = cls === '' ? name : `${cls}::${name}`;
  if (id !== '') ids.push(oneLine(id));
}

// --- xUnit.net v2 XML and trx ------------------------------------------------

/** Each element of the document the reader gives an ID for, in document order; null when it is not XML. */
function xmlTests(xml: string, read: (tag: string, node: XmlNode) => string | null): string[] | null {
  let root: unknown;
  try {
    root = xmlParser().parse(xml);
  } catch {
    return null;
  }
  const ids: string[] = [];
  const visit = (tag: string, node: unknown) => {
    if (Array.isArray(node)) {
      for (const n of node) visit(tag, n);
      return;
    }
    if (!isObject(node)) return;
    const id = read(tag, node);
    if (id !== null && id !== '') ids.push(oneLine(id));
    for (const [key, value] of Object.entries(node)) {
      if (!key.startsWith('@_') && key !== '#text') visit(key, value);
    }
  };
  visit('', root);
  return ids;
}

const attr = (node: XmlNode, name: string) => {
  const v = node[`@_${name}`];
  return typeof v === 'string' ? v : '';
};

/** xUnit.net: `<test name="Ns.Class.Method" result="Fail">`; the name is the fully qualified test. */
function xunitCase(tag: string, node: XmlNode): string | null {
  return tag === 'test' && attr(node, 'result') === 'Fail' ? attr(node, 'name') : null;
}

const TRX_FAILED = ['Failed', 'Error', 'Timeout', 'Aborted'];

/**
 * trx: `<UnitTestResult testName="Ns.Class.Method" outcome="Failed">`, as
 * dotnet test prints it. A data-driven test's rows are InnerResults: when a
 * row failed, the rows are the IDs and their parent is not.
 */
function trxCase(tag: string, node: XmlNode): string | null {
  if (tag !== 'UnitTestResult' || !TRX_FAILED.includes(attr(node, 'outcome'))) return null;
  const inner = Array.isArray(node.InnerResults) ? node.InnerResults : [];
  const rows = inner.flatMap((r) => (isObject(r) && Array.isArray(r.UnitTestResult) ? r.UnitTestResult : []));
  const rowFailed = rows.some((r) => isObject(r) && TRX_FAILED.includes(attr(r, 'outcome')));
  return rowFailed ? null : attr(node, 'testName');
}

// --- mocha --reporter json ---------------------------------------------------

/** Each entry of `failures`: `FILE::fullTitle`, FILE relative to the repository (mocha names it absolutely). */
function mochaTests(report: unknown, repoDir: string): string[] {
  const prefix = `${repoDir.replace(/\/+$/, '')}/`;
  const failures = isObject(report) && Array.isArray(report.failures) ? report.failures : [];
  const ids: string[] = [];
  for (const f of failures) {
    if (!isObject(f) || typeof f.fullTitle !== 'string') continue;
    const name = typeof f.file === 'string' ? f.file : '';
    const file = name.startsWith(prefix) ? name.slice(prefix.length) : name;
    ids.push(oneLine(file === '' ? f.fullTitle : `${file}::${f.fullTitle}`));
  }
  return ids;
}

// --- jest --json -------------------------------------------------------------

/** Each failed assertion: `FILE::Describe › test`, FILE relative to the repository. */
function jestTests(report: unknown, repoDir: string): string[] {
  const ids: string[] = [];
  const prefix = `${repoDir.replace(/\/+$/, '')}/`;
  const results = isObject(report) && Array.isArray(report.testResults) ? report.testResults : [];
  for (const suite of results) {
    if (!isObject(suite)) continue;
    const name = typeof suite.name === 'string' ? suite.name : '';
    const file = name.startsWith(prefix) ? name.slice(prefix.length) : name;
    const assertions = Array.isArray(suite.assertionResults) ? suite.assertionResults : [];
    for (const a of assertions) {
      if (!isObject(a) || a.status !== 'failed') continue;
      const titles = [...(Array.isArray(a.ancestorTitles) ? a.ancestorTitles : []), a.title].filter(
        (t): t is string => typeof t === 'string',
      );
      const test = titles.join(' › ');
      ids.push(oneLine(file === '' ? test : `${file}::${test}`));
    }
  }
  return ids;
}

// --- go test -json -------------------------------------------------------------

/** Each `fail` event that names a test: `Package::Test`. Lines that are not JSON (build errors) are skipped. */
function goTests(stream: string): string[] {
  const ids: string[] = [];
  for (const line of stream.split('\n')) {
    const ev = parseJson(line);
    if (!isObject(ev) || ev.Action !== 'fail') continue;
    if (typeof ev.Test !== 'string' || ev.Test === '') continue;
    const pkg = typeof ev.Package === 'string' ? ev.Package : '';
    ids.push(oneLine(pkg === '' ? ev.Test : `${pkg}::${ev.Test}`));
  }
  return ids;
}
