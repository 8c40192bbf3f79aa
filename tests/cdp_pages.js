#!/usr/bin/env node
// cdp_pages.js PROFILE_DIR JOBS.json: loads pages in one headless chromium, driven over the DevTools protocol on a
// pipe (--remote-debugging-pipe: JSON messages ending in NUL, commands on fd 3, answers and events on fd 4), instead
// of a chromium started per page (--dump-dom, --screenshot): a start costs about a second of CPU, a page here a fifth.
// JOBS.json is a list of pages, each loaded in a tab of its own, one after the other:
//   {"url": "file:///...", "width": 1400, "height": 1000, "dark": false, "wait_for": "#rb-checks",
//    "settle_ms": 300, "dom": "OUT.html", "console": "OUT.txt", "png": "OUT.png"}
// width x height is the viewport; dark asks for prefers-color-scheme: dark (as --force-dark-mode); wait_for, a CSS
// selector the page must hold before anything is taken (10 s at most); settle_ms, a wait after that (default 0).
// dom: document.documentElement.outerHTML (what --dump-dom prints); png: a screenshot of the viewport; console:
// one line per console message, script exception or browser log entry of the page (a refusal under the page's
// Content-Security-Policy is one), "CONSOLE <level> <source>: <text>", empty when there was none.
// Exits 0, or prints one error: line and exits 3 (a page that did not load, a timeout: 60 s per page).
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');

function die(msg) {
    process.stderr.write(`error: cdp_pages.js: ${msg}\n`);
    process.exit(3);
}
if (process.argv.length !== 4) {
    process.stderr.write('error: usage: cdp_pages.js PROFILE_DIR JOBS.json\n');
    process.exit(2);
}
const profile = process.argv[2];
let jobs;
try {
    jobs = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
} catch (e) {
    die(`${process.argv[3]}: ${e.message}`);
}
if (!Array.isArray(jobs)) die(`${process.argv[3]}: expected a list of pages`);

const browser = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-default-apps',
    '--hide-scrollbars', `--user-data-dir=${profile}`, '--remote-debugging-pipe', 'about:blank'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
browser.stderr.on('data', (d) => { stderr = (stderr + d).slice(-2000); });
browser.on('exit', (code, sig) => {
    if (!finished)
        die(`chromium ended (${sig || code}) before the pages were done: ${stderr.trim().split('\n').pop()}`);
});
browser.on('error', (e) => die(`chromium: ${e.message}`));
let finished = false;

let nextId = 1, buf = Buffer.alloc(0);
const pending = new Map(), listeners = [];
function send(method, params = {}, sessionId) {
    const id = nextId++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    browser.stdio[3].write(JSON.stringify(msg) + '\0');
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}
browser.stdio[4].on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    let nul;
    while ((nul = buf.indexOf(0)) >= 0) {
        const msg = JSON.parse(buf.subarray(0, nul).toString('utf8'));
        buf = buf.subarray(nul + 1);
        if (msg.id && pending.has(msg.id)) {
            const p = pending.get(msg.id);
            pending.delete(msg.id);
            if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`));
            else p.resolve(msg.result);
        } else if (msg.method) {
            for (const l of listeners.slice()) l(msg);
        }
    }
});
// event METHOD SESSION: the next such event of the session.
function event(method, sessionId) {
    return new Promise((resolve) => {
        const l = (msg) => {
            if (msg.method === method && msg.sessionId === sessionId) {
                listeners.splice(listeners.indexOf(l), 1);
                resolve(msg.params);
            }
        };
        listeners.push(l);
    });
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function bounded(promise, ms, what) {
    let t;
    const late = new Promise((_, reject) => {
        t = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s`)), ms);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(t));
}

async function page(job) {
    const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
    const lines = [];
    const onLog = (msg) => {
        if (msg.sessionId !== sessionId) return;
        const p = msg.params;
        if (msg.method === 'Runtime.consoleAPICalled')
            lines.push(`CONSOLE ${p.type} console: ${p.args.map((a) => a.value ?? a.description ?? '').join(' ')}`);
        else if (msg.method === 'Runtime.exceptionThrown')
            lines.push(`CONSOLE error exception: ${p.exceptionDetails.exception?.description
                ?? p.exceptionDetails.text}`);
        else if (msg.method === 'Log.entryAdded')
            lines.push(`CONSOLE ${p.entry.level} ${p.entry.source}: ${p.entry.text}`);
    };
    listeners.push(onLog);
    for (const m of ['Page.enable', 'Runtime.enable', 'Log.enable']) await send(m, {}, sessionId);
    await send('Emulation.setDeviceMetricsOverride',
        { width: job.width || 1400, height: job.height || 1000, deviceScaleFactor: 1, mobile: false }, sessionId);
    await send('Emulation.setEmulatedMedia',
        { features: [{ name: 'prefers-color-scheme', value: job.dark ? 'dark' : 'light' }] }, sessionId);
    const loaded = event('Page.loadEventFired', sessionId);
    const nav = await send('Page.navigate', { url: job.url }, sessionId);
    if (nav.errorText) throw new Error(`${job.url}: ${nav.errorText}`);
    await loaded;
    if (job.wait_for) {
        const expr = `document.querySelector(${JSON.stringify(job.wait_for)}) !== null`;
        for (let i = 0; ; i++) {
            const r = await send('Runtime.evaluate', { expression: expr, returnByValue: true }, sessionId);
            if (r.result.value === true) break;
            if (i === 200) throw new Error(`${job.url}: no ${job.wait_for} after 10 s`);
            await sleep(50);
        }
    }
    if (job.settle_ms) await sleep(job.settle_ms);
    if (job.dom) {
        const r = await send('Runtime.evaluate',
            { expression: 'document.documentElement.outerHTML', returnByValue: true }, sessionId);
        fs.writeFileSync(job.dom, r.result.value + '\n');
    }
    if (job.png) {
        const r = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
        fs.writeFileSync(job.png, Buffer.from(r.data, 'base64'));
    }
    listeners.splice(listeners.indexOf(onLog), 1);
    if (job.console) fs.writeFileSync(job.console, lines.map((l) => l.replace(/\n/g, ' ') + '\n').join(''));
    await send('Target.closeTarget', { targetId });
}

(async () => {
    try {
        for (const job of jobs) await bounded(page(job), 60000, job.url);
        finished = true;
        await bounded(send('Browser.close'), 10000, 'Browser.close').catch(() => browser.kill('SIGKILL'));
    } catch (e) {
        finished = true;
        browser.kill('SIGKILL');
        die(e.message);
    }
})();
