/* placeholder: the record helper writes this */
