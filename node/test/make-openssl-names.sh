#!/bin/sh
# Writes test/openssl-names.txt: every algorithm name, alias and object name
# (short name, long name, OID) that `openssl list` prints, one a line. The
# probe test classifies each (and its upper- and lower-case forms) with the
# drop-in and with @ronomon/crypto-async and wants the same answer.
# Made with OpenSSL 3.0.19 (the version inside Node 20 here).
set -eu
cd "$(dirname "$0")"
{
  openssl list -1 -cipher-algorithms
  openssl list -1 -digest-algorithms
  openssl list -1 -cipher-commands
  openssl list -1 -digest-commands
} | sed 's/^ *//; s/ => /\n/g; s/^{ *//; s/ *}$//' | tr ',' '\n' | sed 's/^ *//; s/ *$//' |
  grep -v -e ':$' -e '@' -e '^$' > openssl-names.tmp
openssl list -objects | sed 's/ = /\n/; s/, /\n/g' | sed 's/^ *//; s/ *$//' | grep -v '^$' >> openssl-names.tmp
LC_ALL=C sort -u openssl-names.tmp > openssl-names.txt
rm openssl-names.tmp
