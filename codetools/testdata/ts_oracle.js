// ts_oracle.js ROOT FILE LINE COL [FILE LINE COL...] prints, as a JSON array
// (one entry per position), the definitions and the references
// (declaration included) of the symbol at each FILE:LINE:COL, asked of
// the TypeScript compiler API directly (TS_MODULE names the typescript
// package): the oracle the typescript-language-server answers are compared
// with, since neither it nor tsserver has a command line for them.
const path = require("path"), fs = require("fs");
const ts = require(process.env.TS_MODULE);
const [root, ...positions] = process.argv.slice(2);
const names = fs.readdirSync(root).filter(f => f.endsWith(".ts")).map(f => path.join(root, f));
const host = {
  getScriptFileNames: () => names, getScriptVersion: () => "1",
  getScriptSnapshot: f => fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, "utf8")) : undefined,
  getCurrentDirectory: () => root, getCompilationSettings: () => ({ strict: true }),
  getDefaultLibFileName: o => ts.getDefaultLibFilePath(o), fileExists: ts.sys.fileExists, readFile: ts.sys.readFile,
};
const ls = ts.createLanguageService(host, ts.createDocumentRegistry());
const at = span => { const sf = ls.getProgram().getSourceFile(span.fileName); const lc = sf.getLineAndCharacterOfPosition(span.textSpan.start);
  return path.relative(root, span.fileName) + ":" + (lc.line + 1) + ":" + (lc.character + 1); };
const out = [];
for (let i = 0; i + 2 < positions.length; i += 3) {
  const [file, line, col] = positions.slice(i, i + 3);
  const abs = path.join(root, file);
  const src = ls.getProgram().getSourceFile(abs);
  const pos = ts.getPositionOfLineAndCharacter(src, Number(line) - 1, Number(col) - 1);
  out.push({ definition: (ls.getDefinitionAtPosition(abs, pos) || []).map(at),
    references: (ls.getReferencesAtPosition(abs, pos) || []).map(at) });
}
console.log(JSON.stringify(out));
