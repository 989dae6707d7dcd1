// v4a_reference.js: runs the Agents SDK for JavaScript's applyDiff (from
// @openai/agents-core, installed by scripts/v4a_reference.sh) on a corpus
// of patches, for internal/patch's differential test.
//
// stdin: {"cases": [{"name", "files": {path: content}, "dirs": [path], "patch"}]}
// stdout: [{"ok": bool, "files": {path: content}, "error": string}]
//
// A whole patch is split into operations as the SDK's filesystem capability
// does (its freeform apply_patch: headers "*** Add File: ", "*** Delete
// File: ", "*** Update File: " with an optional "*** Move to: "), each
// operation's diff applied by applyDiff, and the files changed as its
// UnixLocal sandbox changes them: create refuses an existing path (O_EXCL)
// and makes the folders above; delete unlinks a file (a folder or a
// missing path fails); update reads a regular file and, when moved,
// writes the destination (replacing a file there) and unlinks the source.
// The operations run in order and the first failure stops the patch.
'use strict';
const path = require('node:path');
const { applyDiff } = require(process.env.V4A_AGENTS_CORE || '@openai/agents-core');

function split(raw) {
  const lines = raw.trimStart().split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  if (lines[0] !== '*** Begin Patch') throw new Error('no Begin Patch');
  if (lines.length < 2 || lines.at(-1) !== '*** End Patch') throw new Error('no End Patch');
  const isHeader = (l) => l.startsWith('*** Add File: ') || l.startsWith('*** Delete File: ') || l.startsWith('*** Update File: ');
  const ops = [];
  let i = 1;
  const body = () => { const out = []; while (i < lines.length - 1 && !isHeader(lines[i])) out.push(lines[i++]); return out; };
  const header = (l, p) => { const v = l.slice(p.length).trim(); if (!v) throw new Error('missing path: ' + l); return v; };
  while (i < lines.length - 1) {
    const l = lines[i++];
    if (l.startsWith('*** Add File: ')) {
      const p = header(l, '*** Add File: ');
      const b = body();
      if (!b.length || b.some((x) => !x.startsWith('+'))) throw new Error('bad Add File ' + p);
      ops.push({ type: 'create_file', path: p, diff: b.join('\n') + '\n' });
    } else if (l.startsWith('*** Delete File: ')) {
      const p = header(l, '*** Delete File: ');
      if (body().length) throw new Error('Delete File with a diff');
      ops.push({ type: 'delete_file', path: p });
    } else if (l.startsWith('*** Update File: ')) {
      const p = header(l, '*** Update File: ');
      let moveTo;
      if (i < lines.length - 1 && lines[i].startsWith('*** Move to: ')) moveTo = header(lines[i++], '*** Move to: ');
      const b = body();
      if (!b.length && !moveTo) throw new Error('Update File without a hunk');
      ops.push({ type: 'update_file', path: p, diff: b.length ? b.join('\n') + '\n' : '', moveTo });
    } else {
      throw new Error('bad header: ' + l);
    }
  }
  if (!ops.length) throw new Error('no operation');
  return ops;
}

function run(c) {
  const files = new Map(Object.entries(c.files || {}));
  const dirs = new Set(c.dirs || []);
  for (const p of files.keys()) for (let d = path.posix.dirname(p); d !== '.'; d = path.posix.dirname(d)) dirs.add(d);
  const norm = (p) => {
    const n = path.posix.normalize(p);
    if (path.posix.isAbsolute(n) || n === '..' || n.startsWith('../') || n === '.') throw new Error('path escapes the workspace: ' + p);
    return n;
  };
  const mkParents = (p) => {
    const parts = p.split('/');
    for (let k = 1; k < parts.length; k++) {
      const d = parts.slice(0, k).join('/');
      if (files.has(d)) throw new Error('ENOTDIR ' + d);
      dirs.add(d);
    }
  };
  const regular = (p) => {
    if (dirs.has(p)) throw new Error('EISDIR ' + p);
    if (!files.has(p)) throw new Error('ENOENT ' + p);
    return files.get(p);
  };
  for (const op of split(c.patch)) {
    const p = norm(op.path);
    if (op.type === 'create_file') {
      if (files.has(p) || dirs.has(p)) throw new Error('EEXIST ' + p);
      const content = applyDiff('', op.diff, 'create');
      mkParents(p);
      files.set(p, content);
    } else if (op.type === 'delete_file') {
      regular(p);
      files.delete(p);
    } else {
      const next = applyDiff(regular(p), op.diff);
      const dest = op.moveTo ? norm(op.moveTo) : p;
      if (dest !== p) {
        if (dirs.has(dest)) throw new Error('EISDIR ' + dest);
        mkParents(dest);
        files.set(dest, next);
        files.delete(p);
      } else {
        files.set(p, next);
      }
    }
  }
  return Object.fromEntries(files);
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  const out = JSON.parse(input).cases.map((c) => {
    try {
      return { ok: true, files: run(c), error: '' };
    } catch (e) {
      return { ok: false, files: {}, error: String(e && e.message || e) };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
