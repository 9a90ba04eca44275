import { type Artifact, type DecisionTool, isList } from './artifacts.js';

/**
 * A run's world: every adopted artifact and, recursively, the items of adopted
 * lists, in the order they came to be. Every list the model reads and every
 * set of options it chooses from follows this order, so a run's record repeats.
 */
export class World {
  private readonly order: Array<{ ref: string; artifact: Artifact }> = [];
  private readonly refs = new Map<Artifact, string>();
  private readonly applied = new Set<string>();
  private n = 0;

  /** Adopts an artifact (and a list's items, recursively); returns its ref. */
  adopt(a: Artifact): string {
    let ref = this.refs.get(a);
    if (!ref) {
      this.n += 1;
      ref = `${a.type.replace(/[^A-Za-z0-9]/g, '') || 'artifact'}${this.n}`;
      this.refs.set(a, ref);
      this.order.push({ ref, artifact: a });
    }
    if (isList(a)) for (const item of a.items) this.adopt(item);
    return ref;
  }

  entries(): ReadonlyArray<{ ref: string; artifact: Artifact }> {
    return this.order;
  }

  refOf(a: Artifact): string | undefined {
    return this.refs.get(a);
  }

  get(ref: string): Artifact | undefined {
    return this.order.find((e) => e.ref === ref)?.artifact;
  }

  /** A (tool, artifact) pair runs at most once. */
  markApplied(tool: string, ref: string): void {
    this.applied.add(`${tool}\u0000${ref}`);
  }

  wasApplied(tool: string, ref: string): boolean {
    return this.applied.has(`${tool}\u0000${ref}`);
  }

  /** The refs a tool could take now: its type (a list only for a tool taking lists), pair not yet run. */
  candidates(tool: DecisionTool): string[] {
    return this.order
      .filter(({ ref, artifact }) => {
        if (isList(artifact) ? tool.takes !== 'list' : artifact.type !== tool.takes) return false;
        return !this.wasApplied(tool.name, ref);
      })
      .map((e) => e.ref);
  }

  /** The artifacts of the output type, never the input itself. */
  outputs(outputType: string, input: Artifact): string[] {
    return this.order.filter((e) => e.artifact !== input && e.artifact.type === outputType).map((e) => e.ref);
  }
}
