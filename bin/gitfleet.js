#!/usr/bin/env node
// The gitfleet command: runs the compiled CLI (npm ci builds it through the prepare script).
import { runCli } from "../dist/src/cli/main.js";

process.exitCode = await runCli(process.argv.slice(2));
