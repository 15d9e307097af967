#!/usr/bin/env node
/** The `event-callbacks` command (the package's bin): `event-callbacks --help` lists what it does. */
import { main } from './cli/main.js';

process.exit(await main(process.argv.slice(2), process.env));
