#!/bin/sh
pdftotext "$1" -
