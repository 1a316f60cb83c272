#!/usr/bin/env node
// run.js: runs cut's DuckDB recipes over a glob of traces with the npm DuckDB
// (@duckdb/node-api) and writes their rows as JSON Lines, each with a "recipe" member first.
// usage: node run.js [-v name=value]... glob recipe.sql...
// events.sql is read from this file's directory first; -v sets DuckDB variables
// (gap_threshold=1000000, cut_datadir=DIR); $CUT_DATADIR sets cut_datadir too.
'use strict';
const fs = require('fs');
const path = require('path');

function usage() {
	process.stderr.write('usage: node run.js [-v name=value]... glob recipe.sql...\n');
	process.exit(2);
}

// A SQL literal: integers stay integers (ns values are BIGINT), the rest are strings.
function literal(v) {
	return /^-?[0-9]+$/.test(v) ? v : "'" + v.replace(/'/g, "''") + "'";
}

// JSON text of a value from DuckDB; bigints are written as the exact integers they are.
function json(v) {
	if (v === null || v === undefined) return 'null';
	switch (typeof v) {
	case 'bigint': return v.toString();
	case 'number': return Number.isFinite(v) ? JSON.stringify(v) : 'null';
	case 'string': case 'boolean': return JSON.stringify(v);
	}
	if (Array.isArray(v)) return '[' + v.map(json).join(',') + ']';
	if (v instanceof Date) return JSON.stringify(v.toISOString());
	return '{' + Object.keys(v).map((k) => JSON.stringify(k) + ':' + json(v[k])).join(',') + '}';
}

async function main() {
	const argv = process.argv.slice(2), vars = {};
	if (process.env.CUT_DATADIR) vars.cut_datadir = process.env.CUT_DATADIR;
	while (argv.length && argv[0] === '-v') {
		const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(argv[1] || '');
		if (!m) usage();
		vars[m[1]] = m[2];
		argv.splice(0, 2);
	}
	if (argv.length < 2) usage();
	vars.trace_glob = argv.shift();

	let duckdb;
	try {
		duckdb = require('@duckdb/node-api');
	} catch (e) {
		process.stderr.write('run.js: cannot load @duckdb/node-api (npm install it, or set ' +
			'NODE_PATH to the node_modules that has it): ' + e.message + '\n');
		process.exit(2);
	}
	const db = await duckdb.DuckDBInstance.create(':memory:');
	const con = await db.connect();
	let sql = '';
	for (const [k, v] of Object.entries(vars))
		sql += 'SET VARIABLE ' + k + ' = ' + literal(v) + ';\n';
	await con.run(sql + fs.readFileSync(path.join(__dirname, 'events.sql'), 'utf8'));

	const out = [];
	for (const file of argv) {
		const name = path.basename(file, '.sql');
		const reader = await con.runAndReadAll(fs.readFileSync(file, 'utf8'));
		for (const row of reader.getRowObjectsJS())
			out.push('{"recipe":' + JSON.stringify(name) + Object.keys(row)
				.map((k) => ',' + JSON.stringify(k) + ':' + json(row[k])).join('') + '}\n');
	}
	process.stdout.write(out.join(''));
}

main().catch((e) => {
	process.stderr.write('run.js: ' + (e && e.message ? e.message : e) + '\n');
	process.exit(1);
});
