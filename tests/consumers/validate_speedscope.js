// Validate a speedscope file against the JSON schema shipped in the
// speedscope npm package, with ajv.  Usage: node validate_speedscope.js
// NODE_MODULES FILE.  Exit 0 valid, 1 invalid (errors printed).
const path = require('path');
const fs = require('fs');
const modules = process.argv[2];
const Ajv = require(path.join(modules, 'ajv'));
const schema = JSON.parse(fs.readFileSync(
  path.join(modules, 'speedscope', 'dist', 'release', 'file-format-schema.json'), 'utf8'));
const doc = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const ajv = new Ajv({strict: false, allErrors: true});
const validate = ajv.compile(schema);
if (!validate(doc)) {
  console.error(JSON.stringify(validate.errors.slice(0, 10), null, 1));
  process.exit(1);
}
console.log('valid against speedscope ' +
  require(path.join(modules, 'speedscope', 'package.json')).version + ' schema');
