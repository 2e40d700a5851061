// npx-parse.js reads npx argument vectors, one JSON array a line, and prints
// how the installed npm reads each, as a JSON object a line:
//
//   {"options": {...}, "remain": [...], "pkg": "...", "pkgType": "tag"}
//
// options are the npm settings its option parser (nopt) sets from the
// arguments, after npx's own wrapper (bin/npx-cli.js) has rewritten them;
// remain are the positional arguments (the first is "exec"); pkg is the
// package npx runs and pkgType its type to npm-package-arg ("tag",
// "version" and "range" come from the registry). Nothing is run: npx-cli.js
// is loaded with npm's command line replaced by a function that records
// the rewritten arguments.
//
// Usage: node npx-parse.js NPM_DIR  (NPM_DIR is npm's folder: $(npm root -g)/npm)
'use strict'

const path = require('path')
const Module = require('module')
const readline = require('readline')

const npmDir = process.argv[2]
const npxCli = path.join(npmDir, 'bin', 'npx-cli.js')
const req = Module.createRequire(npxCli)
const nopt = req('nopt')
const npa = req('npm-package-arg')
const { definitions, shorthands } = req('@npmcli/config/lib/definitions')
const types = {}
for (const [k, d] of Object.entries(definitions)) {
  types[k] = d.type
}

let captured = null
const load = Module._load
Module._load = function (request, parent, isMain) {
  if (parent && parent.filename === npxCli && request === '../lib/cli.js') {
    return (proc) => { captured = proc.argv.slice() }
  }
  return load.apply(this, arguments)
}

const rl = readline.createInterface({ input: process.stdin })
rl.on('line', (line) => {
  const args = JSON.parse(line)
  const out = {}
  try {
    captured = null
    process.argv = [process.execPath, npxCli, ...args]
    delete require.cache[npxCli]
    const error = console.error
    console.error = () => {}
    try {
      require(npxCli)
    } finally {
      console.error = error
    }
    const conf = nopt(types, shorthands, captured, 2)
    out.remain = conf.argv.remain
    delete conf.argv
    out.options = conf
    const pkg = out.remain[1]
    if (pkg !== undefined) {
      out.pkg = pkg
      try {
        out.pkgType = npa(pkg).type
      } catch (e) {
        out.pkgType = 'invalid'
      }
    }
  } catch (e) {
    out.error = String(e && e.message || e)
  }
  process.stdout.write(JSON.stringify(out) + '\n')
})
