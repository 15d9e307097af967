#!/usr/bin/env node
// `npm test`: the whole suite in several Jest workers, then the suites that hold a rate against the wall clock
// (jest.config.js, project e2e-alone) in one worker with nothing beside them: on two cores, the files running
// in the other workers starve a paced endpoint's calls of CPU and it falls behind its pace. Jest arguments
// pass to both runs; with paths, --selectProjects or a test name, it is one plain Jest run. With
// --outputFile=F (and --json), F holds both runs' results together.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const jest = createRequire(import.meta.url).resolve('jest/bin/jest');
const args = process.argv.slice(2);
const run = (extra) => spawnSync(process.execPath, [jest, ...extra], { stdio: 'inherit' }).status ?? 1;

const focused = args.some((arg) => !arg.startsWith('-') || arg.startsWith('--selectProjects') || arg.startsWith('-t') || arg.startsWith('--testNamePattern'));
if (focused) process.exit(run(args));

const outputFile = args.find((arg) => arg.startsWith('--outputFile='))?.slice('--outputFile='.length);
const withOutput = (suffix) => args.map((arg) => (outputFile && arg.startsWith('--outputFile=') ? `--outputFile=${outputFile}.${suffix}` : arg));
const parallel = run([...withOutput('parallel'), '--selectProjects', 'unit', 'e2e', 'e2e-cluster']);
const alone = run([...withOutput('alone'), '--maxWorkers=1', '--selectProjects', 'e2e-alone']);
// A run that stopped before writing its results (a configuration error) has already said why.
if (outputFile && ['parallel', 'alone'].every((suffix) => existsSync(`${outputFile}.${suffix}`))) {
  const [first, second] = ['parallel', 'alone'].map((suffix) => JSON.parse(readFileSync(`${outputFile}.${suffix}`, 'utf8')));
  const sum = (key) => first[key] + second[key];
  writeFileSync(
    outputFile,
    JSON.stringify({
      ...first,
      success: first.success && second.success,
      numTotalTests: sum('numTotalTests'),
      numPassedTests: sum('numPassedTests'),
      numFailedTests: sum('numFailedTests'),
      numTotalTestSuites: sum('numTotalTestSuites'),
      numPassedTestSuites: sum('numPassedTestSuites'),
      numFailedTestSuites: sum('numFailedTestSuites'),
      testResults: [...first.testResults, ...second.testResults],
    }),
  );
}
process.exit(parallel || alone);
