// rulelang rules for VS Code: starts the rulelang language server (`rulelang lsp`) for .rules files.
// Highlighting comes from syntaxes/rules.tmLanguage.json (generated: python -m rulelang.highlight PATH).
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("rulelang").get("command", "rulelang");
  const serverOptions = { command, args: ["lsp"], transport: TransportKind.stdio };
  const clientOptions = {
    documentSelector: [{ scheme: "file", language: "rules" }, { scheme: "untitled", language: "rules" }],
  };
  client = new LanguageClient("rulelang", "rulelang language server", serverOptions, clientOptions);
  context.subscriptions.push(client);
  return client.start().catch((err) => {
    vscode.window.showErrorMessage(
      `rulelang: could not start \`${command} lsp\` (${err.message || err}); set rulelang.command to the rulelang program.`);
  });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
