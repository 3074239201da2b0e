'use strict';
// `npm pack` / `npm publish` in node/ would make a package without the addon
// (it lives in the per-platform packages) and without the license files (they
// live at the repository's root): one that installs, then throws
// ERR_NONCEFORGE_NO_ADDON. So this directory refuses to be packed as is; the
// release route is `npm run stage` (scripts/stage.js), which writes and packs
// the main package and each platform's into dist/.
process.stderr.write(
  'nonceforge: node/ is the package\'s source, not a release. Run `npm run stage` (after `npm run build`): ' +
    'it writes the main package and the platform package with the addon into node/dist/ and packs both ' +
    '(install both tarballs: npm install ./dist/nonceforge-*.tgz).\n'
);
process.exit(1);
