#!/bin/sh
# extract.sh FILE: prints the text of a PDF.
exec pdftotext "$1" -
