#!/usr/bin/env node
/**
 * job-walk: follows one parameter of an exported function through the calls, with the TypeScript
 * type checker, and counts how often the walk comes back into a file it has already left.
 *
 *   node scripts/job-walk.mjs [FILE] [FUNCTION] [PARAMETER] [--json] [--root DIR] [--project TSCONFIG]
 *                             [--closures inline|follow] [--no-scalars]
 *   defaults: packages/pipeline/src/generate.ts generateVersion job; --root: the current folder
 *   (FILE is read from it; callees outside it are stops); --closures inline; scalars counted.
 *
 * Issue 28's measure: "following generateVersion's `job` through the calls re-enters a file
 * already visited at most 5 times". Always exits 0 (it measures, it does not judge).
 *
 * The program: the tsconfig.json nearest above FILE that includes it (or --project), with its
 * project references read from their sources (as the editor does), so `@dub/core` resolves to
 * packages/core/src, not dist.
 *
 * The rule, what carries the parameter (a "carrier"):
 * - the parameter itself, and any property of a carrier: `job.x`, `job.options.voice_over`,
 *   `job['x']`, also through `!`, `as`, `satisfies`, parentheses, `await`, `a ?? b`, `a || b`,
 *   `c ? a : b` (either side); with --no-scalars, a property of a primitive type (string, number,
 *   boolean, enum) carries nothing: only the job object and its object-valued parts are followed;
 * - a variable initialised or assigned from a carrier: `const x = job.x`, `const { a, b: c, ...r } = job`
 *   (destructured fields), `let x; x = job.x`, `for (const s of job.segments)`;
 * - an object literal with a carrier among its properties (`{ job }`, `{ id: job.version_id }`,
 *   `{ ...job }`): the callee's parameter then carries those properties (`p.job`, or `{ job }`
 *   destructured), and an array literal with a carrier element;
 * - closures (arrow functions, function expressions) inside a walked function: with
 *   `--closures inline` (the default) they are read where they are written, as part of the
 *   function around them (its carriers visible in them), so `runner.run('mix', inputs, async () =>
 *   mix(job))` follows `mix` from the file that wrote the closure, and `runner.run` only when
 *   `inputs` carries the job. With `--closures follow`, a closure whose body names a carrier is
 *   itself a carrier (a function) and is walked when it is called: by the frame itself, by a
 *   followed callee that calls the parameter it landed in (the walk then enters the closure's file
 *   again: stage-runner.ts -> generate.ts is a re-entry), right there when it is passed to a call
 *   the walk does not follow (`arr.map(...)`, `Promise.all`), or, when a followed callee kept it
 *   without calling it, after that callee returns.
 * Not carriers: the return value of a call that received the parameter, strings built from it
 * (`${job.x}`), values stored on objects (`this.ref = ref`), a method's receiver (`job.x.trim()`),
 * the parameters of an inline closure (`job.segments.map((s) => f(s))` does not follow `f`).
 *
 * The walk: starting at FUNCTION, every call in its body (nested calls first, in source order)
 * with a carrier among its arguments, or whose callee is a carrier closure, is followed into the
 * callee's body (resolved by the checker, through imports; methods, constructors and const arrow
 * functions included), with the callee's parameters bound to the carriers they receive,
 * recursively. A call the walk cannot follow is a stop, with its reason: `outside` (the callee is
 * declared outside --root, in node_modules or a .d.ts), `no-body` (an interface or abstract
 * method, a class with no constructor: the runtime target is not known statically), `unresolved`,
 * `recursive` (the callee is already on the walk's stack), `not-received` (the carrier lands on no
 * parameter). An interface method with no body (`s.run(state)`) is followed into the
 * implementations the receiver stands for where that is written down: object literals, consts of
 * them, arrays of those (through imports), handed down as arguments and loop variables
 * (`runStages(GENERATE_STAGES, state)` -> `for (const s of stages)` -> each stage's `run`).
 * Each followed call whose callee lies in another file than the caller is an entry into that
 * file; an entry into a file the walk has visited before is a re-entry. A re-entry into a function
 * that follows no call of its own is a leaf (a lookup such as `getLocale(job.locale)`); the
 * report counts them apart too. Returns to the caller are counted apart (`returns`: how often the
 * walk goes back to a caller in another file).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Loads `typescript` from the folder measured (or this repository). */
function loadTs(root) {
  for (const from of [path.join(root, 'package.json'), import.meta.url]) {
    try {
      return createRequire(from)('typescript');
    } catch {
      // next
    }
  }
  return require('typescript');
}

function parseArgs(argv) {
  const out = { json: false, positional: [], project: undefined, root: process.cwd(), maxFrames: 20000, closures: 'inline', scalars: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') out.json = true;
    else if (a === '--project') out.project = argv[++i];
    else if (a === '--root') out.root = argv[++i];
    else if (a === '--max-frames') out.maxFrames = Number(argv[++i]);
    else if (a === '--closures') out.closures = argv[++i];
    else if (a === '--no-scalars') out.scalars = false;
    else if (a === '-h' || a === '--help') out.help = true;
    else out.positional.push(a);
  }
  const [file = 'packages/pipeline/src/generate.ts', fn = 'generateVersion', param = 'job'] = out.positional;
  return { ...out, root: path.resolve(out.root), file: path.resolve(out.root, file), fn, param };
}

/** The nearest tsconfig.json above `file` whose program includes it. */
function findProject(ts, file, root) {
  let dir = path.dirname(file);
  for (;;) {
    const candidate = path.join(dir, 'tsconfig.json');
    if (fs.existsSync(candidate)) {
      const parsed = parseProject(ts, candidate);
      if (parsed.fileNames.some((f) => path.resolve(f) === file)) return candidate;
    }
    const up = path.dirname(dir);
    if (up === dir || !path.resolve(dir).startsWith(root)) break;
    dir = up;
  }
  throw new Error(`no tsconfig.json above ${file} includes it`);
}

function parseProject(ts, configPath) {
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!parsed) throw new Error(`cannot read ${configPath}`);
  return parsed;
}

export function walk({ file, fn, param, root, project, maxFrames = 20000, closures = 'inline', scalars = true }) {
  if (closures !== 'inline' && closures !== 'follow') throw new Error(`--closures ${closures}: inline or follow`);
  const ts = loadTs(root);
  file = path.resolve(file);
  root = path.resolve(root);
  const configPath = project ? path.resolve(project) : findProject(ts, file, root);
  const parsed = parseProject(ts, configPath);
  const host = ts.createCompilerHost(parsed.options);
  // read referenced projects from their sources, not their built .d.ts (as tsserver does)
  host.useSourceOfProjectReferenceRedirect = () => true;
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, projectReferences: parsed.projectReferences, host });
  const checker = program.getTypeChecker();
  const rel = (f) => path.relative(root, f).split(path.sep).join('/');

  const start = program.getSourceFile(file);
  if (!start) throw new Error(`${rel(file)} is not in the program of ${rel(configPath)}`);
  const startFn = findExportedFunction(start, fn);
  if (!startFn) throw new Error(`${rel(file)} has no function ${fn}`);
  const startParam = startFn.parameters.find((p) => ts.isIdentifier(p.name) && p.name.text === param);
  if (!startParam) throw new Error(`${fn} has no parameter ${param}`);

  const JOB = { kind: 'job' };
  const entries = [{ file: rel(file), via: null }];
  const visited = new Set([file]);
  const reentries = [];
  const stops = [];
  let followed = 0;
  let returns = 0;
  let frames = 0;
  let truncated = false;
  const stack = [];

  function findExportedFunction(sf, name) {
    let found;
    const visit = (node) => {
      if (found) return;
      if (ts.isFunctionDeclaration(node) && node.name?.text === name && node.body) found = node;
      else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === name && node.initializer && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))) found = node.initializer;
      else if (ts.isMethodDeclaration(node) && node.name && ts.isIdentifier(node.name) && node.name.text === name && node.body) found = node;
      else ts.forEachChild(node, visit);
    };
    visit(sf);
    return found;
  }

  const symbolOf = (node) => {
    const s = checker.getSymbolAtLocation(node);
    return s && s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
  };
  const where = (node) => {
    const sf = node.getSourceFile();
    return `${rel(sf.fileName)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  };
  const isFunctionLike = (n) => ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n) || ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n);

  /** Whether `fnNode`'s body names a symbol the environment holds. */
  function captures(fnNode, env) {
    let hit = false;
    const visit = (n) => {
      if (hit) return;
      if (ts.isIdentifier(n)) {
        const s = checker.getSymbolAtLocation(n);
        if (s && env.has(s)) hit = true;
        return;
      }
      if (ts.isShorthandPropertyAssignment(n)) {
        const s = checker.getShorthandAssignmentValueSymbol(n);
        if (s && env.has(s)) hit = true;
        return;
      }
      ts.forEachChild(n, visit);
    };
    if (fnNode.body) visit(fnNode.body);
    return hit;
  }

  function carrierOf(expr, env) {
    if (!expr) return undefined;
    if (ts.isParenthesizedExpression(expr) || ts.isNonNullExpression(expr) || ts.isAsExpression(expr) || ts.isSatisfiesExpression(expr) || ts.isTypeAssertionExpression(expr) || ts.isAwaitExpression(expr)) return carrierOf(expr.expression, env);
    if (ts.isIdentifier(expr)) {
      const s = checker.getSymbolAtLocation(expr);
      return s ? env.get(s) : undefined;
    }
    if (ts.isPropertyAccessExpression(expr)) return scalarCheck(expr, member(carrierOf(expr.expression, env), expr.name.text));
    if (ts.isElementAccessExpression(expr)) {
      const c = carrierOf(expr.expression, env);
      const arg = expr.argumentExpression;
      if (c?.kind === 'job') return scalarCheck(expr, JOB);
      return ts.isStringLiteralLike(arg) || ts.isNumericLiteral(arg) ? scalarCheck(expr, member(c, arg.text)) : undefined;
    }
    if (ts.isConditionalExpression(expr)) return carrierOf(expr.whenTrue, env) ?? carrierOf(expr.whenFalse, env);
    if (ts.isBinaryExpression(expr) && [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.AmpersandAmpersandToken].includes(expr.operatorToken.kind)) {
      return carrierOf(expr.right, env) ?? (expr.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken ? undefined : carrierOf(expr.left, env));
    }
    if (ts.isObjectLiteralExpression(expr)) {
      const props = new Map();
      let whole = false;
      for (const p of expr.properties) {
        if (ts.isPropertyAssignment(p)) {
          const c = carrierOf(p.initializer, env);
          const name = p.name && (ts.isIdentifier(p.name) || ts.isStringLiteralLike(p.name) || ts.isNumericLiteral(p.name)) ? p.name.text : undefined;
          if (c && name !== undefined) props.set(name, c);
        } else if (ts.isShorthandPropertyAssignment(p)) {
          const s = checker.getShorthandAssignmentValueSymbol(p);
          const c = s ? env.get(s) : undefined;
          if (c) props.set(p.name.text, c);
        } else if (ts.isSpreadAssignment(p)) {
          const c = carrierOf(p.expression, env);
          if (c?.kind === 'job') whole = true;
          else if (c?.kind === 'object') for (const [k, v] of c.props) props.set(k, v);
        } else if (ts.isMethodDeclaration(p) && captures(p, env)) {
          props.set(p.name.getText(), { kind: 'fn', node: p, env });
        }
      }
      if (whole) return JOB;
      return props.size ? { kind: 'object', props } : undefined;
    }
    if (ts.isArrayLiteralExpression(expr)) {
      return expr.elements.some((e) => carrierOf(ts.isSpreadElement(e) ? e.expression : e, env)) ? JOB : undefined;
    }
    if (closures === 'follow' && (ts.isArrowFunction(expr) || ts.isFunctionExpression(expr)) && captures(expr, env)) return { kind: 'fn', node: expr, env };
    return undefined;
  }

  /** With scalars off, a value of a primitive type read from a carrier carries nothing. */
  function scalarCheck(node, c) {
    if (scalars || c?.kind !== 'job') return c;
    const t = checker.getTypeAtLocation(node);
    const prim = ts.TypeFlags.StringLike | ts.TypeFlags.NumberLike | ts.TypeFlags.BooleanLike | ts.TypeFlags.BigIntLike | ts.TypeFlags.Undefined | ts.TypeFlags.Null | ts.TypeFlags.EnumLike | ts.TypeFlags.Void;
    const parts = t.isUnion() ? t.types : [t];
    return parts.every((p) => p.flags & prim) ? undefined : c;
  }

  function member(c, name) {
    if (!c) return undefined;
    if (c.kind === 'job') return JOB;
    if (c.kind === 'object') return c.props.get(name);
    return undefined;
  }

  /** Binds a binding name (identifier or pattern) to carrier `c`. */
  function bind(name, c, env) {
    if (!c) return;
    if (ts.isIdentifier(name)) {
      const s = checker.getSymbolAtLocation(name);
      c = scalarCheck(name, c);
      if (s && c) env.set(s, c);
      return;
    }
    if (ts.isObjectBindingPattern(name)) {
      for (const el of name.elements) {
        if (el.dotDotDotToken) bind(el.name, c, env);
        else {
          const key = el.propertyName ? (ts.isIdentifier(el.propertyName) || ts.isStringLiteralLike(el.propertyName) ? el.propertyName.text : undefined) : ts.isIdentifier(el.name) ? el.name.text : undefined;
          bind(el.name, c.kind === 'job' ? JOB : key !== undefined ? member(c, key) : undefined, env);
        }
      }
      return;
    }
    if (ts.isArrayBindingPattern(name)) {
      for (const el of name.elements) if (!ts.isOmittedExpression(el)) bind(el.name, c.kind === 'job' ? JOB : undefined, env);
    }
  }

  /** The function-like declaration (with a body) a call lands in, or a stop reason. */
  function calleeOf(call) {
    const sig = checker.getResolvedSignature(call);
    let decl = sig?.declaration;
    if (!decl || ts.isJSDocSignature?.(decl)) {
      // `new X()` of a class with no constructor, or an unresolved call
      const s = symbolOf(ts.isNewExpression(call) ? call.expression : call.expression);
      const d = s?.declarations?.[0];
      if (d && !isInRepo(d)) return { stop: 'outside', name: s.name };
      if (d && ts.isClassLike(d)) return { stop: 'no-body', name: s.name };
      return { stop: 'unresolved', name: call.expression.getText() };
    }
    const name = decl.name?.getText?.() ?? call.expression.getText();
    if (!isInRepo(decl)) return { stop: 'outside', name };
    if (!decl.body) {
      // an overload: its implementation
      const s = decl.symbol ?? (decl.name && checker.getSymbolAtLocation(decl.name));
      const impl = s?.declarations?.find((d) => isFunctionLike(d) && d.body);
      if (impl) decl = impl;
      else return { stop: 'no-body', name };
    }
    // const f = () => ... : the declaration is the arrow itself
    return { node: decl, name };
  }

  function isInRepo(node) {
    const f = path.resolve(node.getSourceFile().fileName);
    return f.startsWith(root + path.sep) && !f.includes(`${path.sep}node_modules${path.sep}`) && !f.endsWith('.d.ts');
  }

  function enter(fnNode, env, fromFile, via, impl = new Map()) {
    const to = path.resolve(fnNode.getSourceFile().fileName);
    let again;
    if (to !== fromFile) {
      entries.push({ file: rel(to), via });
      if (visited.has(to)) reentries.push((again = { file: rel(to), via, leaf: false }));
      visited.add(to);
    }
    const before = followed;
    stack.push(fnNode);
    frames++;
    walkBody(fnNode, env, impl);
    stack.pop();
    // a leaf: the function entered follows no call of its own (getLocale(job.locale), blobKeys.x(job.asset_id))
    if (again) again.leaf = followed === before;
    if (to !== fromFile) returns++;
  }

  /** How many times each closure has been entered. */
  const closureCalls = new Map();

  function enterClosure(node, env, fromFile, at) {
    if (stack.includes(node)) {
      stops.push({ at, callee: `(closure at ${where(node)})`, reason: 'recursive' });
      return;
    }
    closureCalls.set(node, (closureCalls.get(node) ?? 0) + 1);
    enter(node, env, fromFile, `${at} (closure at ${where(node)})`);
  }

  function bindParams(fnNode, args, env) {
    fnNode.parameters.forEach((p, i) => {
      if (p.dotDotDotToken) {
        if (args.slice(i).some(Boolean)) bind(p.name, JOB, env);
      } else bind(p.name, args[i], env);
    });
  }

  /**
   * The object literals an expression may be, where that is written down: itself, a const
   * initialised with one (through imports, `as`, `satisfies`, `Object.freeze`), the elements of an
   * array of them, or what a parameter or loop variable of this frame was bound to (`impl`). An
   * array and its elements are one set (the loop variable of `for (const s of stages)` gets them).
   */
  function objectsOf(expr, impl, depth = 0) {
    if (!expr || depth > 12) return [];
    if (ts.isParenthesizedExpression(expr) || ts.isNonNullExpression(expr) || ts.isAsExpression(expr) || ts.isSatisfiesExpression(expr) || ts.isTypeAssertionExpression(expr) || ts.isAwaitExpression(expr)) return objectsOf(expr.expression, impl, depth + 1);
    if (ts.isObjectLiteralExpression(expr)) return [expr];
    if (ts.isArrayLiteralExpression(expr)) return expr.elements.flatMap((e) => objectsOf(ts.isSpreadElement(e) ? e.expression : e, impl, depth + 1));
    if (ts.isCallExpression(expr) && expr.expression.getText() === 'Object.freeze') return objectsOf(expr.arguments[0], impl, depth + 1);
    if (ts.isIdentifier(expr)) {
      const local = checker.getSymbolAtLocation(expr);
      if (local && impl.has(local)) return impl.get(local);
      const decl = symbolOf(expr)?.valueDeclaration;
      if (decl && ts.isVariableDeclaration(decl) && decl.initializer && ts.isVariableDeclarationList(decl.parent) && decl.parent.flags & ts.NodeFlags.Const) return objectsOf(decl.initializer, new Map(), depth + 1);
    }
    return [];
  }

  /** The function that property `name` of object literal `obj` holds: a method, an arrow or function expression, or a named function. */
  function methodOf(obj, name, depth = 0) {
    for (const p of [...obj.properties].reverse()) {
      const key = p.name && (ts.isIdentifier(p.name) || ts.isStringLiteralLike(p.name)) ? p.name.text : undefined;
      if (ts.isSpreadAssignment(p)) {
        for (const o of depth < 8 ? objectsOf(p.expression, new Map()) : []) {
          const m = methodOf(o, name, depth + 1);
          if (m) return m;
        }
        continue;
      }
      if (key !== name) continue;
      if (ts.isMethodDeclaration(p)) return p.body ? p : undefined;
      let value = ts.isPropertyAssignment(p) ? p.initializer : ts.isShorthandPropertyAssignment(p) ? p.name : undefined;
      while (value && (ts.isParenthesizedExpression(value) || ts.isAsExpression(value) || ts.isSatisfiesExpression(value))) value = value.expression;
      if (!value) return undefined;
      if ((ts.isArrowFunction(value) || ts.isFunctionExpression(value)) && value.body) return value;
      if (ts.isIdentifier(value)) {
        const sym = ts.isShorthandPropertyAssignment(p) ? checker.getShorthandAssignmentValueSymbol(p) : symbolOf(value);
        const d = (sym && sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym)?.valueDeclaration;
        if (d && ts.isFunctionDeclaration(d) && d.body) return d;
        if (d && ts.isVariableDeclaration(d) && d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))) return d.initializer;
      }
      return undefined;
    }
    return undefined;
  }

  /** Walks one function's body with `env` (and the object literals its names stand for, `impl`): nested calls first, in source order. */
  function walkBody(fnNode, env, impl = new Map()) {
    const file = path.resolve(fnNode.getSourceFile().fileName);

    function handleCall(call) {
      if (frames >= maxFrames) {
        truncated = true;
        return;
      }
      const at = where(call);
      const calleeCarrier = carrierOf(call.expression, env);
      const args = (call.arguments ?? []).map((a) => (ts.isSpreadElement(a) ? undefined : carrierOf(a, env)));
      if (calleeCarrier?.kind === 'fn') {
        // a closure carrying the parameter is called: the walk goes into its body
        followed++;
        const inner = new Map(calleeCarrier.env);
        bindParams(calleeCarrier.node, args, inner);
        enterClosure(calleeCarrier.node, inner, file, at);
        return;
      }
      if (!args.some(Boolean)) return;
      const closures = args.filter((c) => c?.kind === 'fn');
      const target = calleeOf(call);
      if (target.stop === 'no-body' && ts.isPropertyAccessExpression(call.expression)) {
        // an interface's method (`s.run(state)`): the implementations are the object literals the receiver stands for
        const impls = [...new Set(objectsOf(call.expression.expression, impl).map((o) => methodOf(o, call.expression.name.text)).filter(Boolean))];
        if (impls.length) {
          for (const m of impls) {
            if (stack.includes(m)) {
              stops.push({ at, callee: call.expression.getText(), reason: 'recursive' });
              continue;
            }
            const inner = new Map();
            bindParams(m, args, inner);
            followed++;
            enter(m, inner, file, `${at} ${call.expression.getText()} (at ${where(m)})`, bindImpl(m, call));
          }
          return;
        }
      }
      if (target.stop) {
        stops.push({ at, callee: target.name, reason: target.stop });
        // a callee outside the walk runs what it is given (arr.map(cb)): the closures, here
        for (const c of closures) enterClosure(c.node, new Map(c.env), file, at);
        return;
      }
      if (stack.includes(target.node)) {
        stops.push({ at, callee: target.name, reason: 'recursive' });
        return;
      }
      const params = target.node.parameters;
      if (!args.some((c, i) => c && (i < params.length || params.at(-1)?.dotDotDotToken))) {
        stops.push({ at, callee: target.name, reason: 'not-received' });
        return;
      }
      const inner = new Map();
      bindParams(target.node, args, inner);
      followed++;
      const before = new Map(closures.map((c) => [c.node, closureCalls.get(c.node) ?? 0]));
      enter(target.node, inner, file, `${at} ${target.name}`, bindImpl(target.node, call));
      // a closure the callee kept (stored, not called) runs later: walked after the callee returns
      for (const c of closures) if ((closureCalls.get(c.node) ?? 0) === before.get(c.node)) enterClosure(c.node, new Map(c.env), file, `${at} (kept by ${target.name})`);
    }

    const rec = (n) => {
      if (truncated) return;
      if (n !== fnNode && isFunctionLike(n)) {
        // nested functions: walked when called (see header); with --closures inline, read as part of this frame
        if (closures === 'inline' && (ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && n.body) rec(n.body);
        return;
      }
      if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
        rec(n.expression);
        for (const a of n.arguments ?? []) rec(a);
        handleCall(n);
        return;
      }
      if (ts.isForOfStatement(n)) {
        rec(n.expression);
        if (carrierOf(n.expression, env) && ts.isVariableDeclarationList(n.initializer)) for (const d of n.initializer.declarations) bind(d.name, JOB, env);
        const objs = objectsOf(n.expression, impl);
        if (objs.length && ts.isVariableDeclarationList(n.initializer)) {
          for (const d of n.initializer.declarations) {
            const sym = ts.isIdentifier(d.name) ? checker.getSymbolAtLocation(d.name) : undefined;
            if (sym) impl.set(sym, objs);
          }
        }
        rec(n.statement);
        return;
      }
      ts.forEachChild(n, rec);
      if (ts.isVariableDeclaration(n) && n.initializer) bind(n.name, carrierOf(n.initializer, env), env);
      else if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isIdentifier(n.left)) bind(n.left, carrierOf(n.right, env), env);
    };
    if (fnNode.body) {
      if (ts.isBlock(fnNode.body)) for (const s of fnNode.body.statements) rec(s);
      else rec(fnNode.body);
    }

    /** The callee's parameters bound to the object literals the call's arguments stand for. */
    function bindImpl(callee, call) {
      const out = new Map();
      callee.parameters.forEach((p, i) => {
        const a = call.arguments?.[i];
        if (!a || !ts.isIdentifier(p.name)) return;
        const objs = objectsOf(ts.isSpreadElement(a) ? a.expression : a, impl);
        const sym = checker.getSymbolAtLocation(p.name);
        if (objs.length && sym) out.set(sym, objs);
      });
      return out;
    }
  }

  const env0 = new Map();
  bind(startParam.name, JOB, env0);
  stack.push(startFn);
  frames++;
  walkBody(startFn, env0);
  stack.pop();

  const counts = new Map();
  for (const e of entries) counts.set(e.file, (counts.get(e.file) ?? 0) + 1);
  return {
    start: `${rel(file)} ${fn}(${param})`,
    project: rel(configPath),
    rule: { closures, scalars },
    files: [...counts].map(([f, n]) => ({ file: f, entries: n })),
    followed,
    stops,
    reentries: reentries.length,
    reentriesBeyondLeaves: reentries.filter((e) => !e.leaf).length,
    returns,
    reentryList: reentries,
    entries,
    truncated,
  };
}

function format(r) {
  const lines = [];
  lines.push(`job-walk: ${r.start} (program: ${r.project}; closures ${r.rule.closures}, scalars ${r.rule.scalars ? 'counted' : 'not counted'})`);
  lines.push('entries into each file (first visit included):');
  for (const f of r.files) lines.push(`  ${String(f.entries).padStart(3)}  ${f.file}`);
  lines.push('stops:');
  for (const s of r.stops) lines.push(`  ${s.at}  ${s.callee}  (${s.reason})`);
  lines.push('re-entries (file entered again <- the call):');
  for (const e of r.reentryList) lines.push(`  ${e.file}  <- ${e.via}${e.leaf ? '  (leaf)' : ''}`);
  if (r.truncated) lines.push('truncated: the walk reached --max-frames; the figures count only what was walked');
  lines.push(`files visited: ${r.files.length}`);
  lines.push(`calls followed: ${r.followed}`);
  lines.push(`stops: ${r.stops.length}`);
  lines.push(`returns to a caller in another file: ${r.returns}`);
  lines.push(`re-entries into a function that follows no call of its own (leaf): ${r.reentries - r.reentriesBeyondLeaves}`);
  lines.push(`re-entries: ${r.reentries}`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('job-walk.mjs')) {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    console.log('usage: node scripts/job-walk.mjs [FILE] [FUNCTION] [PARAMETER] [--json] [--root DIR] [--project TSCONFIG] [--closures inline|follow] [--no-scalars]');
  } else {
    try {
      const r = walk(args);
      console.log(args.json ? JSON.stringify(r, null, 2) : format(r));
    } catch (e) {
      if (args.json) console.log(JSON.stringify({ error: String(e?.message ?? e) }));
      else console.error(`job-walk: ${e?.message ?? e}`);
    }
  }
  process.exitCode = 0;
}
