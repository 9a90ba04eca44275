import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const CORE = join(ROOT, 'core');

/**
 * `chalk-harness/plugin` is closed: every type that an exported declaration of the entry
 * mentions (a port's members, a hook event's fields, the Plugin contract's), when it is one of
 * Chalk's own, is exported by the entry by name, so a third party never recovers a type with
 * `Parameters<>` tricks.
 */
describe('the published plugin entry', { timeout: 60_000 }, () => {
  it('names every Chalk type its exports mention', () => {
    const entry = join(CORE, 'plugin.ts');
    const program = ts.createProgram([entry], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(entry);
    if (!source) throw new Error('core/plugin.ts not found');
    const moduleSymbol = checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error('core/plugin.ts has no module symbol');
    const exported = checker.getExportsOfModule(moduleSymbol).map((s) => {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
      return target;
    });
    const named = new Set(exported);
    const missing = new Set<string>();
    const seen = new Set<ts.Node>();
    const chalkDecl = (d: ts.Declaration) => d.getSourceFile().fileName.startsWith(CORE);

    const visit = (node: ts.Node): void => {
      if (seen.has(node)) return;
      seen.add(node);
      if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
        const at = ts.isTypeReferenceNode(node) ? node.typeName : node.expression;
        let sym = checker.getSymbolAtLocation(at);
        if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
        const decl = sym?.declarations?.[0];
        if (sym && decl && chalkDecl(decl) && !(sym.flags & ts.SymbolFlags.TypeParameter)) {
          if (!named.has(sym)) missing.add(`${sym.name} (${decl.getSourceFile().fileName.slice(ROOT.length + 1)})`);
        }
      }
      // Only the declarations' shapes, not function bodies or initialisers.
      if (ts.isBlock(node)) return;
      ts.forEachChild(node, visit);
    };
    for (const sym of exported) {
      for (const d of sym.declarations ?? []) {
        if (!chalkDecl(d)) continue;
        // A class's private members are not part of what a plugin sees.
        if (ts.isClassDeclaration(d)) {
          const hidden = (n: ts.Declaration) =>
            (ts.getCombinedModifierFlags(n) & ts.ModifierFlags.Private) !== 0 ||
            ((n as ts.NamedDeclaration).name !== undefined &&
              ts.isPrivateIdentifier((n as ts.NamedDeclaration).name as ts.Node));
          for (const m of d.members) {
            if (hidden(m)) continue;
            if (ts.isConstructorDeclaration(m)) for (const p of m.parameters) !hidden(p) && visit(p);
            else visit(m);
          }
          for (const h of d.heritageClauses ?? []) visit(h);
        } else if (ts.isVariableDeclaration(d)) {
          if (d.type) visit(d.type);
        } else {
          visit(d);
        }
      }
    }
    expect([...missing].sort()).toEqual([]);
  });
});
